// The Ferry client library (NSURLSession-style background sessions) is issue 4's work.
// Until then, apps use the D-Bus API documented in desktop/dev.ferry.Agent1.xml;
// FerryBus.BusClient is the Swift way to call it.
@_exported import FerryBus
