import PackagePlugin

/// Generates FerryBus's typed layer of dev.ferry.Agent1 (method and signal types, the handler
/// protocol, the clients' calls) from desktop/dev.ferry.Agent1.xml at each build where it changed.
@main
struct BusCodegen: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let xml = context.package.directoryURL.appending(path: "desktop/dev.ferry.Agent1.xml")
        let output = context.pluginWorkDirectoryURL.appending(path: "Agent1+Generated.swift")
        return [
            .buildCommand(
                displayName: "Generating the bus layer from dev.ferry.Agent1.xml",
                executable: try context.tool(named: "ferry-bus-codegen").url,
                arguments: [xml.path, output.path],
                inputFiles: [xml], outputFiles: [output])
        ]
    }
}
