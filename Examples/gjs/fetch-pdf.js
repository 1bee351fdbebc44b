#!/usr/bin/env gjs
// fetch-pdf in JavaScript (GJS): seed 000's app on Ferry's D-Bus API, through Gio.DBusProxy.
//
// Downloads one PDF through a background session, prints progress, moves the finished file into
// the documents folder (never over another file) and opens it with xdg-open. If the app is
// closed meanwhile, the agent finishes the download and starts this script again with
// FERRY_BACKGROUND_SESSION set: it then moves the file, acknowledges the events and tells the
// agent it is done (FinishedHandlingEvents).
//
//     gjs fetch-pdf.js URL [--documents DIR]
const {Gio, GLib} = imports.gi;
const System = imports.system;

const SESSION = 'dev.ferry.examples.FetchPDF.GJS';

// Without DO_NOT_AUTO_START, the first call starts ferryd through D-Bus activation.
const agent = Gio.DBusProxy.new_for_bus_sync(Gio.BusType.SESSION, Gio.DBusProxyFlags.DO_NOT_LOAD_PROPERTIES,
    null, 'dev.ferry.Agent1', '/dev/ferry/Agent1', 'dev.ferry.Agent1', null);

/** One of the agent's methods (dev.ferry.Agent1.xml); its reply as plain values. */
function call(method, signature, args) {
    const reply = agent.call_sync(method, signature ? new GLib.Variant(signature, args) : null,
        Gio.DBusCallFlags.NONE, -1, null);
    return reply ? reply.recursiveUnpack() : [];
}

/** Moves path into folder under its own name, or "name (1).ext" and so on if taken. */
function moveWithoutOverwriting(path, folder) {
    GLib.mkdir_with_parents(folder, 0o700);
    const name = GLib.path_get_basename(path);
    const dot = name.lastIndexOf('.');
    const [stem, ext] = dot > 0 ? [name.slice(0, dot), name.slice(dot)] : [name, ''];
    for (let n = 0; ; n++) {
        const target = GLib.build_filenamev([folder, stem + (n ? ` (${n})` : '') + ext]);
        try {
            // No OVERWRITE flag: an existing file is never replaced.
            Gio.File.new_for_path(path).move(Gio.File.new_for_path(target), Gio.FileCopyFlags.NONE, null, null);
            return target;
        } catch (e) {
            if (!e.matches(Gio.IOErrorEnum, Gio.IOErrorEnum.EXISTS))
                throw e;
        }
    }
}

function parseArguments(argv) {
    let url = null;
    let documents = GLib.get_user_special_dir(GLib.UserDirectory.DIRECTORY_DOCUMENTS) ||
        GLib.build_filenamev([GLib.get_home_dir(), 'Documents']);
    for (let i = 0; i < argv.length; i++) {
        if (argv[i] === '--documents')
            documents = argv[++i];
        else
            url = argv[i];
    }
    return {url, documents};
}

const {url, documents} = parseArguments(ARGV);
const relaunched = GLib.getenv('FERRY_BACKGROUND_SESSION') === SESSION;
if (!relaunched && !/^https?:\/\//.test(url || '')) {
    printerr(`fetch-pdf: not an http(s) URL: ${url}`);
    System.exit(64);
}

const loop = new GLib.MainLoop(null, false);
let task = null;
let delivered = 0;
let lastPercent = -1;
let exitCode = null;
const saved = new Map();

/** Each kind's keys: the dev.ferry.Event.<kind> annotations of FetchEvents in the XML. */
function handle(kind, id, data) {
    if (kind === 'progress' && id === task && data.expected > 0) {
        const percent = Math.floor(data.received * 100 / data.expected);
        if (percent !== lastPercent) {
            lastPercent = percent;
            print(`${percent}% (${data.received} of ${data.expected} bytes)`);
        }
    } else if (kind === 'finished' && data.file && GLib.file_test(data.file, GLib.FileTest.EXISTS)) {
        saved.set(id, moveWithoutOverwriting(data.file, documents));
        print(`saved ${saved.get(id)}`);
    } else if (kind === 'completed' && id === task) {
        if (data.error) {
            printerr(`fetch-pdf: download failed: ${data.error}`);
            exitCode = 1;
        } else if (saved.has(id)) {
            const [, , , status] = GLib.spawn_sync(null, ['xdg-open', saved.get(id)], null,
                GLib.SpawnFlags.SEARCH_PATH, null);
            exitCode = status === 0 ? 0 : 1;
        } else {
            exitCode = 1;
        }
    }
}

/** Fetches and handles every queued event, acknowledging each once it is handled. */
function drain() {
    while (exitCode === null) {
        const [events] = call('FetchEvents', '(stu)', [SESSION, delivered, 100]);
        if (events.length === 0)
            break;
        for (const [seq, kind, id, data] of events) {
            handle(kind, id, data);
            call('AcknowledgeEvents', '(st)', [SESSION, seq]);
            delivered = seq;
        }
    }
    if (relaunched && exitCode === null) {
        // Every waiting event is handled: the completion handler of iOS.
        call('FinishedHandlingEvents', '(s)', [SESSION]);
        exitCode = 0;
    }
    if (exitCode !== null)
        loop.quit();
}

try {
    // Relaunch this script, with its folder, when events wait and it is not running.
    const script = Gio.File.new_for_path(System.programInvocationName).get_path();
    const [opened] = call('OpenSession', '(sa{sv})', [SESSION, {
        'launch-command': new GLib.Variant('as', ['gjs', script, '--documents', documents]),
        'keep-events': new GLib.Variant('b', true),
    }]);
    agent.connect('g-signal', (proxy, sender, signal, params) => {
        if (signal === 'EventsAvailable' && params.deepUnpack()[0] === SESSION)
            drain();
    });
    if (!relaunched) {
        [task] = call('CreateDownload', '(ssa{sv})', [SESSION, url, {
            'directory': new GLib.Variant('s', opened.inbox),
            'description': new GLib.Variant('s', 'fetch-pdf.js'),
        }]);
    }
    drain(); // what an earlier run left (or what this launch is for)
    if (exitCode === null)
        loop.run();
} catch (e) {
    printerr(`fetch-pdf: ${e.message}`); // the agent's dev.ferry.Error.* says why
    exitCode = 2;
}
System.exit(exitCode);
