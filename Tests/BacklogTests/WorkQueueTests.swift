import Testing
@testable import Pipeline

/// The pipeline's queue between its reading and storing threads.
@Suite("The pipeline's queue")
struct WorkQueueTests {
    /// An item that says when it is freed.
    final class Item: Sendable {
        let number: Int
        init(_ number: Int) { self.number = number }
    }

    @Test("an item taken is no longer held by the queue: what it holds is bounded by what is queued, not by what went through")
    func takenItemsAreReleased() {
        let queue = WorkQueue<Item>(capacity: 2)
        var taken: [Int] = []
        var watched: [() -> Item?] = []
        // Fewer than the 64 taken slots after which the queue compacts: before, each taken item
        // stayed referenced until then, so an export's 8 MiB batches piled up (800 records of
        // 1 MB: 711 MB).
        for round in 0..<30 {
            do {
                let item = Item(round)
                weak var weakItem = item
                watched.append { weakItem }
                #expect(queue.put(item))
            }
            if let item = queue.take() { taken.append(item.number) }
        }
        #expect(taken == Array(0..<30))
        #expect(watched.allSatisfy { $0() == nil }, "items still held: \(watched.compactMap { $0()?.number })")
        queue.finish()
        #expect(queue.take() == nil)
    }
}
