#define _GNU_SOURCE   /* fallocate */
#include "CFerryShim.h"
#include <fcntl.h>
#include <unistd.h>
#include <errno.h>
#include <sys/epoll.h>
#include <pthread.h>
#include <sched.h>
#include <sys/vfs.h>
#include <malloc.h>
#include <sys/syscall.h>
#include <linux/openat2.h>

CURLcode ferry_easy_setopt_long(CURL *e, CURLoption o, long v) { return curl_easy_setopt(e, o, v); }
CURLcode ferry_easy_setopt_off(CURL *e, CURLoption o, curl_off_t v) { return curl_easy_setopt(e, o, v); }
CURLcode ferry_easy_setopt_str(CURL *e, CURLoption o, const char *v) { return curl_easy_setopt(e, o, v); }
CURLcode ferry_easy_setopt_ptr(CURL *e, CURLoption o, void *v) { return curl_easy_setopt(e, o, v); }

/* curl takes a callback and its user data as two options: set both, or report the first failure. */
#define SET_CALLBACK(setopt, handle, fn_option, fn, data_option, user) \
    do { rc = setopt(handle, fn_option, fn); if (!rc) rc = setopt(handle, data_option, user); } while (0)

CURLcode ferry_easy_set_write(CURL *e, ferry_data_fn fn, void *user) {
    CURLcode rc; SET_CALLBACK(curl_easy_setopt, e, CURLOPT_WRITEFUNCTION, fn, CURLOPT_WRITEDATA, user); return rc;
}
CURLcode ferry_easy_set_read(CURL *e, ferry_data_fn fn, void *user) {
    CURLcode rc; SET_CALLBACK(curl_easy_setopt, e, CURLOPT_READFUNCTION, fn, CURLOPT_READDATA, user); return rc;
}
CURLcode ferry_easy_set_seek(CURL *e, ferry_seek_fn fn, void *user) {
    CURLcode rc; SET_CALLBACK(curl_easy_setopt, e, CURLOPT_SEEKFUNCTION, fn, CURLOPT_SEEKDATA, user); return rc;
}

long ferry_easy_info_long(CURL *e, CURLINFO i) { long v = 0; curl_easy_getinfo(e, i, &v); return v; }
curl_off_t ferry_easy_info_off(CURL *e, CURLINFO i) { curl_off_t v = -1; curl_easy_getinfo(e, i, &v); return v; }
const char *ferry_easy_info_str(CURL *e, CURLINFO i) { char *v = NULL; curl_easy_getinfo(e, i, &v); return v; }
void *ferry_easy_info_private(CURL *e) { void *v = NULL; curl_easy_getinfo(e, CURLINFO_PRIVATE, &v); return v; }

CURLMcode ferry_multi_set_socket(CURLM *m, ferry_socket_fn fn, void *user) {
    CURLMcode rc; SET_CALLBACK(curl_multi_setopt, m, CURLMOPT_SOCKETFUNCTION, fn, CURLMOPT_SOCKETDATA, user); return rc;
}
CURLMcode ferry_multi_set_timer(CURLM *m, ferry_timer_fn fn, void *user) {
    CURLMcode rc; SET_CALLBACK(curl_multi_setopt, m, CURLMOPT_TIMERFUNCTION, fn, CURLMOPT_TIMERDATA, user); return rc;
}
CURLMcode ferry_multi_setopt_long(CURLM *m, CURLMoption o, long v) { return curl_multi_setopt(m, o, v); }

int ferry_multi_next_done(CURLM *m, CURL **easy, CURLcode *result) {
    int left = 0;
    CURLMsg *msg;
    while ((msg = curl_multi_info_read(m, &left)) != NULL) {
        if (msg->msg == CURLMSG_DONE) {
            *easy = msg->easy_handle;
            *result = msg->data.result;
            return 1;
        }
    }
    return 0;
}

const GVariantType *ferry_variant_type(const char *s) { return G_VARIANT_TYPE(s); }

int ferry_epoll_new(void) { return epoll_create1(EPOLL_CLOEXEC); }

int ferry_epoll_watch(int epfd, int fd, int what) {
    if (what == CURL_POLL_REMOVE) return epoll_ctl(epfd, EPOLL_CTL_DEL, fd, NULL);
    struct epoll_event ev = { .events = 0, .data.fd = fd };
    if (what & CURL_POLL_IN) ev.events |= EPOLLIN;
    if (what & CURL_POLL_OUT) ev.events |= EPOLLOUT;
    if (epoll_ctl(epfd, EPOLL_CTL_MOD, fd, &ev) == 0) return 0;
    return errno == ENOENT ? epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) : -1;
}

int ferry_epoll_ready(int epfd, int *fds, int *flags, int max) {
    struct epoll_event ev[64];
    if (max > 64) max = 64;
    int n = epoll_wait(epfd, ev, max, 0);
    for (int i = 0; i < n; i++) {
        fds[i] = ev[i].data.fd;
        flags[i] = ((ev[i].events & (EPOLLIN | EPOLLHUP)) ? CURL_CSELECT_IN : 0)
                 | ((ev[i].events & EPOLLOUT) ? CURL_CSELECT_OUT : 0)
                 | ((ev[i].events & EPOLLERR) ? CURL_CSELECT_ERR : 0);
    }
    return n < 0 ? 0 : n;
}

int ferry_preallocate(int fd, int64_t offset, int64_t length) {
    return fallocate(fd, FALLOC_FL_KEEP_SIZE, (off_t)offset, (off_t)length);
}

long ferry_file_system_type(const char *path) {
    struct statfs info;
    return statfs(path, &info) == 0 ? (long)info.f_type : -1;
}

int ferry_start_writeback(int fd) {
    return sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
}

long ferry_dirty_pages(int fd) {
    struct { unsigned long long offset, length; } range = { 0, 0 };   // 0: to the end
    struct { unsigned long long cache, dirty, writeback, evicted, recently_evicted; } stat;
    return syscall(451 /* cachestat, Linux 6.5 */, fd, &range, &stat, 0) == 0 ? (long)stat.dirty : -1;
}

// The interface XML is embedded at compile time so the agent cannot drift from desktop/.
static const char agent_xml[] = {
#embed "../../desktop/dev.ferry.Agent1.xml"
    , 0
};
const char *ferry_agent_interface_xml(void) { return agent_xml; }

void ferry_name_thread(const char *name) { pthread_setname_np(pthread_self(), name); }

long ferry_copy_file_range(int from, long long *from_offset, int to, long long *to_offset, unsigned long length) {
    off_t in = (off_t)*from_offset, out = (off_t)*to_offset;
    ssize_t n = copy_file_range(from, &in, to, &out, length, 0);
    *from_offset = in; *to_offset = out;
    return n;
}

int ferry_openat2(int dirfd, const char *path, int flags, unsigned mode, unsigned long long resolve) {
    struct open_how how = { .flags = (unsigned long long)flags, .mode = mode, .resolve = resolve };
    return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof how);
}
unsigned long long ferry_resolve_no_links(void) { return RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS; }
unsigned long long ferry_resolve_beneath(void) { return RESOLVE_BENEATH; }

CURLSH *ferry_cookie_share_new(void) {
    CURLSH *share = curl_share_init();
    if (share) curl_share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_COOKIE);
    return share;
}

void ferry_keep_freed_memory(int heap_up_to, int kept) {
    mallopt(M_MMAP_THRESHOLD, heap_up_to);
    mallopt(M_TRIM_THRESHOLD, kept);
}

int ferry_usable_cpus(void) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0) return (int)sysconf(_SC_NPROCESSORS_ONLN);
    return CPU_COUNT(&set);
}

static _Thread_local int inside_curl;
void ferry_set_inside_curl(int inside) { inside_curl = inside; }
int ferry_inside_curl(void) { return inside_curl; }
