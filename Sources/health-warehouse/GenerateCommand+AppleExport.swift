import AppleExport
import DemoData
import Foundation

extension GenerateCommand {
    /// `--format apple-export`: DIR/export.zip of the simulated person, written with libzip,
    /// export.xml streamed into the archive as it is made.
    func writeAppleExport(into folder: URL) throws -> Int32 {
        let options = DemoGenerator.Options(start: start, days: days, seed: seed)
        let path = folder.appendingPathComponent("export.zip").path
        let routes = DemoAppleExport.routes(options)
        let document = AppleExportDocument(options, malformed: malformed)
        var bytes = 0
        do {
            let zip = try ZipWriter(path: path, modified: Int(start.adding(days: days).daysSinceEpoch) * 86_400)
            try zip.add("apple_health_export/export.xml") {
                let chunk = document.next()
                bytes += chunk?.count ?? 0
                return chunk
            }
            for route in routes {
                var gpx: [UInt8]? = nil
                var done = false
                try zip.add("apple_health_export/" + route.path) {
                    guard !done else { return nil }
                    done = true
                    gpx = DemoAppleExport.gpx(route)
                    defer { gpx = nil }
                    return gpx
                }
            }
            try zip.close()
        } catch let error as AppleExportError {
            throw CommandFailure(message: error.message, hint: "check that the folder is writable and the disk has room")
        }
        printError("wrote \(path): export.xml of \(bytes) bytes, \(document.records) records, \(document.workouts) workouts, "
            + "\(routes.count) routes, \(document.activitySummaries) activity summaries\(malformed ? ", one malformed Record" : ""), "
            + "days \(start) to \(start.adding(days: days - 1)), seed \(seed)")
        return 0
    }
}
