/// What a session's configuration and the agent's settings decide for its tasks' transfers and
/// saves: where its files go, where an app is handed them, how long a transfer may be silent,
/// its cookie jar. Pure: the core's carryOut only carries these out.
struct SessionRules: Sendable {
    let session: String
    let config: SessionConfig
    let settings: AgentCore.Settings

    /// A sandboxed app's files stay where it can read them (its folder, through the resolved path).
    var confined: Bool { !config.app.isEmpty }

    /// Where the session is handed files (an upload's reply, an app's unclaimed download): the
    /// agent's inbox for it, or a sandboxed app's own, inside its folder, under its name for the
    /// session.
    var inbox: String {
        config.appHome.isEmpty
            ? settings.state.inbox(session)
            : StateFolder.appInbox(appHome: config.appHome, session: SessionKey.name(of: session, app: config.app))
    }

    /// A finished download's folder when its task names none: for the host's sessions ferryd's
    /// --download-dir, else the session's, else the user's download folder (nil: XDG's); for a
    /// sandboxed app the session's, else its inbox.
    var defaultDirectory: String? {
        confined
            ? config.defaultDirectory ?? inbox
            : settings.downloadDirectory ?? config.defaultDirectory ?? settings.downloadFolder
    }

    /// An upload's reply as the record to save: into the inbox, named after the task.
    func reply(of r: TaskRecord) -> TaskRecord {
        var reply = r
        reply.output = inbox + "/\(r.id)-reply"
        reply.sha256 = nil
        return reply
    }

    /// How long a transfer may go without a byte: the agent's limit, or the session's request
    /// timeout when that is shorter (0: none of its own).
    var stallSeconds: Int {
        config.requestTimeout > 0 ? min(settings.stallSeconds, config.requestTimeout) : settings.stallSeconds
    }

    /// The session's cookie jar, when it keeps cookies (URLSession's httpShouldSetCookies).
    var cookieJar: String? { config.cookies ? settings.state.cookieJar(session) : nil }
}
