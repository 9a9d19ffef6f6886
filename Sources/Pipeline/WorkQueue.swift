import Foundation

/// A bounded blocking queue between the pipeline's reading thread and its storing one. It
/// holds at most `capacity` items: one taken is no longer referenced here, so memory is bounded
/// by what is queued, never by how many items went through.
final class WorkQueue<Element>: @unchecked Sendable {
    private let condition = NSCondition()
    /// Taken slots (before `head`) are nil until compacted: a batch of an export may hold 8 MiB.
    private var items: [Element?] = []
    private var head = 0
    private var finished = false
    private var closed = false
    private let capacity: Int

    /// A queue holding at most `capacity` items.
    init(capacity: Int) {
        self.capacity = capacity
    }

    /// Adds an item, waiting while the queue is full; false once the queue is closed.
    func put(_ item: Element) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while items.count - head >= capacity && !closed { condition.wait() }
        guard !closed else { return false }
        items.append(item)
        condition.broadcast()
        return true
    }

    /// No more items will come.
    func finish() {
        condition.lock()
        finished = true
        condition.broadcast()
        condition.unlock()
    }

    /// The consumer gives up: waiting producers return false, items are dropped.
    func close() {
        condition.lock()
        closed = true
        items.removeAll()
        head = 0
        condition.broadcast()
        condition.unlock()
    }

    /// The next item, waiting for one; nil when finished and empty, or closed.
    func take() -> Element? {
        condition.lock()
        defer { condition.unlock() }
        while head == items.count && !finished && !closed { condition.wait() }
        guard !closed, head < items.count else { return nil }
        let item = items[head]
        items[head] = nil
        head += 1
        if head > 64 && head * 2 > items.count {
            items.removeFirst(head)
            head = 0
        }
        condition.broadcast()
        return item
    }
}
