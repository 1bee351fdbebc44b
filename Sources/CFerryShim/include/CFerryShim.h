// Typed, non-variadic wrappers for the few libcurl and GLib entry points Swift cannot
// call directly (variadic functions and macros). Nothing else belongs here.
#ifndef FERRY_SHIM_H
#define FERRY_SHIM_H
#include <curl/curl.h>
#include <glib.h>
#include <glib-object.h>
#include <gio/gio.h>

// libcurl easy options
CURLcode ferry_easy_setopt_long(CURL *easy, CURLoption option, long value);
CURLcode ferry_easy_setopt_off(CURL *easy, CURLoption option, curl_off_t value);
CURLcode ferry_easy_setopt_str(CURL *easy, CURLoption option, const char *value);
CURLcode ferry_easy_setopt_ptr(CURL *easy, CURLoption option, void *value);
typedef size_t (*ferry_data_fn)(char *data, size_t size, size_t count, void *user);
CURLcode ferry_easy_set_write(CURL *easy, ferry_data_fn fn, void *user);
CURLcode ferry_easy_set_read(CURL *easy, ferry_data_fn fn, void *user);
typedef int (*ferry_seek_fn)(void *user, curl_off_t offset, int origin);
CURLcode ferry_easy_set_seek(CURL *easy, ferry_seek_fn fn, void *user);

// libcurl easy info
long ferry_easy_info_long(CURL *easy, CURLINFO info);
curl_off_t ferry_easy_info_off(CURL *easy, CURLINFO info);
const char *ferry_easy_info_str(CURL *easy, CURLINFO info);
void *ferry_easy_info_private(CURL *easy);

// libcurl share: a handle sharing cookies (curl_share_setopt is variadic)
CURLSH *ferry_cookie_share_new(void);

// libcurl multi
typedef int (*ferry_socket_fn)(CURL *easy, curl_socket_t s, int what, void *user, void *socketp);
typedef int (*ferry_timer_fn)(CURLM *multi, long timeout_ms, void *user);
CURLMcode ferry_multi_set_socket(CURLM *multi, ferry_socket_fn fn, void *user);
CURLMcode ferry_multi_set_timer(CURLM *multi, ferry_timer_fn fn, void *user);
CURLMcode ferry_multi_setopt_long(CURLM *multi, CURLMoption option, long value);
/// Drains one finished transfer; returns 0 when none is left.
int ferry_multi_next_done(CURLM *multi, CURL **easy, CURLcode *result);

// GLib
const GVariantType *ferry_variant_type(const char *type_string);

// Linux (a macro-guarded declaration under _GNU_SOURCE)
/// fallocate(FALLOC_FL_KEEP_SIZE): claims disk blocks without changing the file's size.
int ferry_preallocate(int fd, int64_t offset, int64_t length);

/// mallopt(3) (<malloc.h> is not in Swift's Glibc module): allocations up to `heap_up_to` bytes
/// come from the heap, and up to `kept` bytes freed at its top stay with the process.
void ferry_keep_freed_memory(int heap_up_to, int kept);

/// How many CPUs this process may run on (sched_getaffinity: a `taskset` counts; CPU_COUNT is a macro).
int ferry_usable_cpus(void);

/// Whether the calling thread is inside curl's callbacks (a per-thread flag: curl runs on the
/// transfer threads, and the store and the bus assert they are never called from there).
void ferry_set_inside_curl(int inside);
int ferry_inside_curl(void);

/* Names the calling thread (pthread_setname_np needs _GNU_SOURCE, which Swift's Glibc lacks). */
void ferry_name_thread(const char *name);

/// epoll with curl's socket flags (struct epoll_event is packed on x86-64: Swift cannot import
/// it faithfully). `what` is CURL_POLL_IN/OUT/INOUT, or CURL_POLL_REMOVE to forget the socket.
int ferry_epoll_watch(int epfd, int fd, int what);
/// A new epoll set (close-on-exec).
int ferry_epoll_new(void);
/// Ready sockets without waiting: their fds and CURL_CSELECT_* flags; returns how many.
int ferry_epoll_ready(int epfd, int *fds, int *flags, int max);

/// statfs(2)'s f_type of the file system holding `path` (-1 when it cannot be examined):
/// <sys/vfs.h> is not in Swift's Glibc module.
long ferry_file_system_type(const char *path);

/// Starts writing a file's dirty pages to disk without waiting (sync_file_range(2), which
/// Swift's Glibc module does not declare): a later fsync of it waits less.
int ferry_start_writeback(int fd);

/// How many of a file's cached pages are dirty (cachestat(2), Linux 6.5; -1 where it is
/// missing): the tests check with it that `ferry_start_writeback` starts the writes.
long ferry_dirty_pages(int fd);

/// The D-Bus interface XML (desktop/dev.ferry.Agent1.xml), compiled in.
const char *ferry_agent_interface_xml(void);

/// openat2(2) (no glibc wrapper): opens `path` relative to `dirfd` with `resolve` (RESOLVE_*
/// flags of <linux/openat2.h>) limiting how the path may be followed. -1 and errno on failure.
int ferry_openat2(int dirfd, const char *path, int flags, unsigned mode, unsigned long long resolve);
/// RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS, and RESOLVE_BENEATH.
unsigned long long ferry_resolve_no_links(void);
unsigned long long ferry_resolve_beneath(void);

/// copy_file_range(2) (declared only under _GNU_SOURCE): the kernel copies between two files
/// at the given offsets, advancing them.
long ferry_copy_file_range(int from, long long *from_offset, int to, long long *to_offset, unsigned long length);

#endif
