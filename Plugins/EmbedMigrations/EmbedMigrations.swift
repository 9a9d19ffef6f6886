import Foundation
import PackagePlugin

/// Compiles `migrations/*.sql` and `migrations/repeatable/*.sql` into the target that uses
/// this plugin, so the binary migrates from any directory with no checkout beside it.
///
/// SwiftPM plans build-tool plugins only when the package changes, so the list of files known
/// at planning time can be stale by the next build. The two folders themselves are inputs of
/// the command (a file added or removed changes a folder's modification time) and the tool
/// lists them itself when it runs, so a new or edited file is embedded by the next
/// `swift build`. A file deleted since planning stops the build with "missing inputs" (loud,
/// never a stale binary); `touch Package.swift` re-plans.
@main
struct EmbedMigrations: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let root = context.package.directoryURL.appending(path: "migrations")
        let folders = [root, root.appending(path: "repeatable")]
        let files = folders.flatMap { folder in
            ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [])
                .filter { $0.hasSuffix(".sql") }.sorted().map { folder.appending(path: $0) }
        }
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedMigrations.swift")
        return [
            .buildCommand(
                displayName: "Embedding migrations",
                executable: try context.tool(named: "EmbedMigrationsTool").url,
                arguments: [output.path, root.path],
                inputFiles: folders + files,
                outputFiles: [output]
            ),
        ]
    }
}
