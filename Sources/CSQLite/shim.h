#include <sqlite3.h>

/// sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0), which Swift cannot call (variadic): SQLite then
/// keeps no global memory statistics, and takes no process-wide mutex around every allocation
/// it makes. Only before SQLite is initialized (before the first connection); else SQLITE_MISUSE.
static inline int ferry_sqlite_without_memory_statistics(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}
