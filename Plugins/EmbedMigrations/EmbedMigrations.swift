import Foundation
import PackagePlugin

/// Compiles the top-level `migrations/*.sql` into the target that uses this plugin, so the
/// binary migrates from any directory with no checkout beside it.
@main
struct EmbedMigrations: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let directory = context.package.directoryURL.appending(path: "migrations")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        let inputs = names.filter { $0.hasSuffix(".sql") }.sorted().map { directory.appending(path: $0) }
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedMigrations.swift")
        return [
            .buildCommand(
                displayName: "Embedding \(inputs.count) migrations",
                executable: try context.tool(named: "EmbedMigrationsTool").url,
                arguments: [output.path] + inputs.map(\.path),
                inputFiles: inputs,
                outputFiles: [output]
            ),
        ]
    }
}
