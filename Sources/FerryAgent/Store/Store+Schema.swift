import FerryCore

/// The store's schema, as the migrations that made it.
extension Store {
    /// Versioned schema: add a migration, never edit a shipped one. Each runs once, in a
    /// transaction of its own, and is recorded by name in the table earlier versions (GRDB's
    /// migrator) recorded theirs in.
    static func migrate(_ db: SQLiteConnection) throws {
        try db.execute("CREATE TABLE IF NOT EXISTS grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY)")
        let done = Set(try db.cached("SELECT identifier FROM grdb_migrations").texts())
        for (identifier, sql) in migrations where !done.contains(identifier) {
            try db.transaction {
                try db.execute(sql)
                try db.cached("INSERT INTO grdb_migrations(identifier) VALUES (?)").run([identifier])
            }
        }
    }

    static let migrations: [(String, String)] = [
        (
            "v1",
            """
            CREATE TABLE sessions(
                identifier TEXT PRIMARY KEY NOT NULL,
                config TEXT NOT NULL,
                last_seq INTEGER NOT NULL DEFAULT 0,
                created INTEGER NOT NULL);
            CREATE TABLE tasks(
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                session TEXT NOT NULL,
                kind TEXT NOT NULL DEFAULT 'download',
                url TEXT NOT NULL,
                host TEXT NOT NULL,
                state TEXT NOT NULL,
                reason TEXT,
                received INTEGER NOT NULL DEFAULT 0,
                expected INTEGER,
                etag TEXT,
                last_modified TEXT,
                directory TEXT,
                output TEXT,
                file TEXT,
                suggested_name TEXT,
                sha256 TEXT,
                description TEXT NOT NULL DEFAULT '',
                headers TEXT NOT NULL DEFAULT '{}',
                error TEXT,
                error_name TEXT,
                attempts INTEGER NOT NULL DEFAULT 0,
                retry_at INTEGER,
                created INTEGER NOT NULL,
                updated INTEGER NOT NULL);
            CREATE INDEX tasks_by_state ON tasks(state, id);
            CREATE INDEX tasks_by_session ON tasks(session, id);
            CREATE TABLE events(
                session TEXT NOT NULL,
                seq INTEGER NOT NULL,
                task INTEGER NOT NULL,
                event TEXT NOT NULL,
                PRIMARY KEY(session, seq)) WITHOUT ROWID;
            CREATE TABLE meta(key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);
            """
        ),
        (
            "v2: uploads, methods, session bookkeeping",
            """
            ALTER TABLE tasks ADD COLUMN method TEXT;
            ALTER TABLE tasks ADD COLUMN upload_file TEXT;
            ALTER TABLE sessions ADD COLUMN finished_events INTEGER NOT NULL DEFAULT 0;
            """
        ),
        // GetStatus reads these seven rows instead of counting 100,000 tasks; the triggers
        // change them in the same transaction as the task, so they cannot drift.
        (
            "v3: task counts kept as tasks change",
            """
            CREATE TABLE task_counts(state TEXT PRIMARY KEY NOT NULL, n INTEGER NOT NULL) WITHOUT ROWID;
            INSERT INTO task_counts(state, n) SELECT state, COUNT(*) FROM tasks GROUP BY state;
            CREATE TRIGGER task_counts_insert AFTER INSERT ON tasks BEGIN
                INSERT INTO task_counts(state, n) VALUES (NEW.state, 1)
                ON CONFLICT(state) DO UPDATE SET n = n + 1;
            END;
            CREATE TRIGGER task_counts_delete AFTER DELETE ON tasks BEGIN
                UPDATE task_counts SET n = n - 1 WHERE state = OLD.state;
            END;
            CREATE TRIGGER task_counts_update AFTER UPDATE OF state ON tasks WHEN OLD.state != NEW.state BEGIN
                UPDATE task_counts SET n = n - 1 WHERE state = OLD.state;
                INSERT INTO task_counts(state, n) VALUES (NEW.state, 1)
                ON CONFLICT(state) DO UPDATE SET n = n + 1;
            END;
            """
        ),
        // The scheduler asks whether any host it may still use has queued tasks before it
        // reads the queue: with one busy host and 100,000 tasks queued for it, that read
        // would otherwise scan them all at every start. Kept by triggers, like task_counts.
        (
            "v4: queued tasks counted per host",
            """
            CREATE TABLE queued_hosts(host TEXT PRIMARY KEY NOT NULL, n INTEGER NOT NULL) WITHOUT ROWID;
            INSERT INTO queued_hosts(host, n) SELECT host, COUNT(*) FROM tasks WHERE state = 'queued' GROUP BY host;
            CREATE TRIGGER queued_hosts_insert AFTER INSERT ON tasks WHEN NEW.state = 'queued' BEGIN
                INSERT INTO queued_hosts(host, n) VALUES (NEW.host, 1) ON CONFLICT(host) DO UPDATE SET n = n + 1;
            END;
            CREATE TRIGGER queued_hosts_delete AFTER DELETE ON tasks WHEN OLD.state = 'queued' BEGIN
                UPDATE queued_hosts SET n = n - 1 WHERE host = OLD.host;
            END;
            CREATE TRIGGER queued_hosts_leave AFTER UPDATE OF state, host ON tasks WHEN OLD.state = 'queued' BEGIN
                UPDATE queued_hosts SET n = n - 1 WHERE host = OLD.host;
            END;
            CREATE TRIGGER queued_hosts_enter AFTER UPDATE OF state, host ON tasks WHEN NEW.state = 'queued' BEGIN
                INSERT INTO queued_hosts(host, n) VALUES (NEW.host, 1) ON CONFLICT(host) DO UPDATE SET n = n + 1;
            END;
            """
        ),
        // A new task's counts are added once per batch by `insert` (one upsert per state and
        // host instead of two trigger runs per row: a third of a 1,000-task batch's insert).
        (
            "v5: new tasks counted by the insert",
            """
            DROP TRIGGER task_counts_insert;
            DROP TRIGGER queued_hosts_insert;
            """
        ),
        // The queue is read by priority, then age: an index of the queued tasks only.
        (
            "v6: priorities and per-task speed limits",
            """
            ALTER TABLE tasks ADD COLUMN priority REAL NOT NULL DEFAULT 0.5;
            ALTER TABLE tasks ADD COLUMN max_rate INTEGER;
            CREATE INDEX tasks_queue ON tasks(priority DESC, id) WHERE state = 'queued';
            """
        ),
        (
            "v7: a task's own attempts and deadline",
            """
            ALTER TABLE tasks ADD COLUMN max_attempts INTEGER;
            ALTER TABLE tasks ADD COLUMN deadline INTEGER;
            """
        ),
        (
            "v8: an upload's reply from the server",
            """
            ALTER TABLE tasks ADD COLUMN reply_file TEXT;
            ALTER TABLE tasks ADD COLUMN reply_status INTEGER;
            ALTER TABLE tasks ADD COLUMN reply_cut INTEGER NOT NULL DEFAULT 0;
            """
        ),
        (
            "v9: resumable uploads",
            """
            ALTER TABLE tasks ADD COLUMN resumable TEXT;
            ALTER TABLE tasks ADD COLUMN upload_url TEXT;
            """
        ),
        (
            "v10: an upload's reply headers",
            """
            ALTER TABLE tasks ADD COLUMN reply_headers TEXT;
            """
        ),
        (
            "v11: a download kept as the server encoded it",
            """
            ALTER TABLE tasks ADD COLUMN keeps_encoding INTEGER NOT NULL DEFAULT 0;
            """
        ),
    ]
}
