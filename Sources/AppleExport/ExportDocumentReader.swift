import HealthPayload

/// Turns the events of an export document into `ExportItem`s, in document order.
///
/// What it reads: the root `HealthData` (its `locale`), `ExportDate`, and the elements the
/// mapping names — `Record` (at the top and inside a `Correlation`), `Workout` with its
/// `MetadataEntry`, `WorkoutEvent`, `WorkoutStatistics`, `WorkoutActivity` and `WorkoutRoute`
/// (`FileReference` or inline `Location`s), `ActivitySummary`. `Me`, clinical records,
/// audiograms and vision prescriptions are passed over. An item with anything unreadable in
/// it becomes `.skipped` with the first reason, never a half-read item; so does one whose
/// children would hold more than `maxItemBytes` of attributes or whose inline route more than
/// `ExportBatcher.maxRoutePoints` points, so that memory stays bounded by the largest item.
final class ExportDocumentReader: XMLEventHandler {
    /// The attributes of one item's children kept at most (its metadata, HRV beats, events, …).
    static let maxItemBytes = 4 << 20

    private enum Frame {
        case root, foreignRoot, ignored, correlation, record, hrvList, workout, workoutRoute, workoutActivity, summary
    }

    private let emit: (ExportItem) -> Void
    private let onExportDate: (String) -> Void
    private var frames: [Frame] = []
    private var record: ExportRecord?
    private var workout: ExportWorkout?
    private var summary: ExportActivitySummary?
    /// The first reason the item being read cannot be used.
    private var broken: SkippedElement?
    /// The attribute bytes of the open item's children kept so far.
    private var itemBytes = 0

    /// `HealthData`'s `locale` and `ExportDate`'s `value`, as written.
    private(set) var locale: String?
    private(set) var exportDate: String?
    /// Top-level elements the mapping does not name (ClinicalRecord, Audiogram, VisionPrescription), by name.
    private(set) var passedOver: [String: Int] = [:]

    /// A reader handing each item to `emit`, and `ExportDate`'s value to `onExportDate` when read.
    init(onExportDate: @escaping (String) -> Void = { _ in }, emit: @escaping (ExportItem) -> Void) {
        self.emit = emit
        self.onExportDate = onExportDate
    }

    private var itemOpen: Bool { record != nil || workout != nil || summary != nil }
    private var sawRoot = false

    func startElement(_ e: XMLStartElement) {
        switch frames.last {
        case nil:
            sawRoot = true
            if e.isNamed("HealthData") {
                locale = e.value("locale")
                frames.append(.root)
            } else {
                emit(.skipped(SkippedElement(name: e.nameText, line: e.line,
                                             reason: "the document's root element is <\(e.nameText)>, not <HealthData>: this is not the Health app's export.xml")))
                frames.append(.foreignRoot)
            }
        case .root:
            if e.isNamed("Record") {
                record = ExportRecord(attributes: ElementAttributes(e), line: e.line)
                frames.append(.record)
            } else if e.isNamed("Workout") {
                workout = ExportWorkout(attributes: ElementAttributes(e), line: e.line)
                frames.append(.workout)
            } else if e.isNamed("ActivitySummary") {
                summary = ExportActivitySummary(attributes: ElementAttributes(e), line: e.line)
                frames.append(.summary)
            } else if e.isNamed("Correlation") {
                frames.append(.correlation)
            } else {
                if e.isNamed("ExportDate") {
                    exportDate = e.value("value")
                    if let exportDate { onExportDate(exportDate) }
                } else if e.isNamed("ClinicalRecord") || e.isNamed("Audiogram") || e.isNamed("VisionPrescription") {
                    passedOver[e.nameText, default: 0] += 1
                }
                frames.append(.ignored)
            }
        case .correlation:
            if e.isNamed("Record") {
                record = ExportRecord(attributes: ElementAttributes(e), line: e.line)
                frames.append(.record)
            } else {
                frames.append(.ignored)
            }
        case .record, .hrvList, .workout, .workoutActivity, .workoutRoute:
            guard keeps(e) else {
                frames.append(.ignored)
                return
            }
            child(e)
        case .summary, .ignored, .foreignRoot:
            frames.append(.ignored)
        }
    }

    /// True while the open item may keep `e`'s attributes: past `maxItemBytes` (or, for a
    /// `Location`, past the route point bound) the item is skipped, and nothing more is kept.
    private func keeps(_ e: XMLStartElement) -> Bool {
        guard broken == nil else { return false }
        // Values, and a little for each name.
        let bytes = (0..<e.attributeCount).reduce(0) { $0 + e.attribute($1).value.count + 16 }
        itemBytes += bytes
        if itemBytes > Self.maxItemBytes {
            markBroken(SkippedElement(name: e.nameText, line: e.line, reason: "its elements hold more than \(Self.maxItemBytes) bytes of attributes"))
            return false
        }
        if e.isNamed("Location"), (workout?.inlineRoute.count ?? 0) >= ExportBatcher.maxRoutePoints {
            markBroken(SkippedElement(name: e.nameText, line: e.line, reason: "more than \(ExportBatcher.maxRoutePoints) route points"))
            return false
        }
        return true
    }

    /// A child of the open item.
    private func child(_ e: XMLStartElement) {
        switch frames.last {
        case .record:
            if e.isNamed("MetadataEntry") {
                record?.metadata.append((e.value("key") ?? "", e.value("value") ?? ""))
                frames.append(.ignored)
            } else if e.isNamed("HeartRateVariabilityMetadataList") {
                frames.append(.hrvList)
            } else {
                frames.append(.ignored)
            }
        case .hrvList:
            if e.isNamed("InstantaneousBeatsPerMinute") {
                record?.beats.append((e.value("bpm") ?? "", e.value("time") ?? ""))
            }
            frames.append(.ignored)
        case .workout:
            if e.isNamed("MetadataEntry") {
                workout?.metadata.append((e.value("key") ?? "", e.value("value") ?? ""))
                frames.append(.ignored)
            } else if e.isNamed("WorkoutEvent") {
                workout?.events.append(ElementAttributes(e))
                frames.append(.ignored)
            } else if e.isNamed("WorkoutStatistics") {
                workout?.statistics.append(ElementAttributes(e))
                frames.append(.ignored)
            } else if e.isNamed("WorkoutActivity") {
                workout?.activities.append(ElementAttributes(e))
                frames.append(.workoutActivity)
            } else if e.isNamed("WorkoutRoute") {
                workout?.routes.append(ElementAttributes(e))
                frames.append(.workoutRoute)
            } else {
                frames.append(.ignored)
            }
        case .workoutActivity:
            // iOS 16 keeps a multi-sport workout's statistics per activity; the workout's own come too.
            if e.isNamed("WorkoutStatistics") { workout?.statistics.append(ElementAttributes(e)) }
            frames.append(.ignored)
        case .workoutRoute:
            if e.isNamed("FileReference"), let path = e.value("path") {
                if workout?.routeFiles.contains(path) == false { workout?.routeFiles.append(path) }
            } else if e.isNamed("Location") {
                location(e)
            }
            frames.append(.ignored)
        default:
            frames.append(.ignored)
        }
    }

    func endElement() {
        guard let frame = frames.popLast() else { return }
        switch frame {
        case .record:
            if let r = record { finish(.record(r), name: "Record", line: r.line) }
            record = nil
        case .workout:
            if let w = workout { finish(.workout(w), name: "Workout", line: w.line) }
            workout = nil
        case .summary:
            if let s = summary { finish(.activitySummary(s), name: "ActivitySummary", line: s.line) }
            summary = nil
        default:
            break
        }
    }

    func characters(_ text: UnsafeBufferPointer<UInt8>) {}

    func brokenElement(name: String, line: Int, reason: String) {
        if itemOpen {
            markBroken(SkippedElement(name: name, line: line, reason: reason))
        } else if frames.last != .foreignRoot && frames.last != .ignored {
            emit(.skipped(SkippedElement(name: name, line: line, reason: reason)))
        }
    }

    func problem(line: Int, reason: String, inElement: Bool) {
        if itemOpen {
            markBroken(SkippedElement(name: "text", line: line, reason: reason))
        } else {
            // Before any root element the whole document is unreadable; after it, only this part.
            emit(.skipped(SkippedElement(name: sawRoot ? "content" : "document", line: line, reason: reason)))
        }
    }

    func restarted(line: Int) {
        dropOpenItem(reason: broken?.reason ?? "the document is unreadable from line \(line)")
        frames = frames.isEmpty ? [] : [frames[0]]
    }

    /// At the end of the document: an item still open was cut off.
    func documentEnded(atLine line: Int) {
        dropOpenItem(reason: "the document ends inside it (line \(line))")
        frames.removeAll()
    }

    /// The item being read, if any, is skipped with `reason`.
    private func dropOpenItem(reason: String) {
        let open: (String, Int)? = record.map { ("Record", $0.line) } ?? workout.map { ("Workout", $0.line) }
            ?? summary.map { ("ActivitySummary", $0.line) }
        if let (name, start) = open { emit(.skipped(SkippedElement(name: name, line: start, reason: reason))) }
        record = nil
        workout = nil
        summary = nil
        broken = nil
        itemBytes = 0
    }

    private func markBroken(_ reason: SkippedElement) {
        if broken == nil { broken = reason }
    }

    private func finish(_ item: ExportItem, name: String, line: Int) {
        itemBytes = 0
        if let broken {
            let inner = broken.name == name || broken.name == "text" ? "" : " (its \(broken.name))"
            let at = broken.line != line ? " at line \(broken.line)" : ""
            emit(.skipped(SkippedElement(name: name, line: line, reason: broken.reason + inner + at)))
            self.broken = nil
        } else {
            emit(item)
        }
    }

    /// An inline route point (`Location`): date, latitude and longitude required; a negative
    /// speed, course or accuracy is Core Location's "not available" and is left out.
    private func location(_ e: XMLStartElement) {
        guard let date = e.value("date").flatMap(ExportTimestamp.init),
              let lat = e.value("latitude").flatMap(ExportNumber.parse), abs(lat) <= 90,
              let lon = e.value("longitude").flatMap(ExportNumber.parse), abs(lon) <= 180
        else {
            markBroken(SkippedElement(name: "Location", line: e.line, reason: "a route point without a readable date, latitude or longitude"))
            return
        }
        func optional(_ name: StaticString, allowNegative: Bool) -> Double? {
            guard let v = e.value(name).flatMap(ExportNumber.parse), abs(v) <= 1e15 else { return nil }
            return v < 0 && !allowNegative ? nil : v
        }
        workout?.inlineRoute.times.append(date.milliseconds * 1000)
        workout?.inlineRoute.latitudes.append(lat)
        workout?.inlineRoute.longitudes.append(lon)
        workout?.inlineRoute.altitudes.append(optional("altitude", allowNegative: true))
        workout?.inlineRoute.speeds.append(optional("speed", allowNegative: false))
        workout?.inlineRoute.courses.append(optional("course", allowNegative: false))
        workout?.inlineRoute.horizontalAccuracies.append(optional("horizontalAccuracy", allowNegative: false))
        workout?.inlineRoute.verticalAccuracies.append(optional("verticalAccuracy", allowNegative: false))
    }
}
