import Foundation
import Testing
@testable import WebUI

@Suite("Sessions, the sign-in limit, cookies, forms and origins")
struct SignInPiecesTests {
    @Test("a session is found by its id only, and the store keeps its SHA-256, not the id")
    func sessionsKeyedByHash() {
        let store = SessionStore()
        let id = store.open(person: "me", tokenID: 7, tokenExpiresAt: nil)
        #expect(id.count == 43)
        #expect(store.session(id)?.person == "me")
        #expect(store.session(id)?.tokenID == 7)
        #expect(store.session(String(id.dropLast()) + "x") == nil)
        #expect(SessionStore.key(id) != id && SessionStore.key(id).count == 64)
        let other = store.open(person: "me", tokenID: 7, tokenExpiresAt: nil)
        #expect(other != id)
    }

    @Test("a session ends when idle too long, when its lifetime or its token's expiry passes, and on sign-out")
    func sessionsEnd() {
        let store = SessionStore(idleSeconds: 60, lifetimeSeconds: 300)
        let start = Date(timeIntervalSince1970: 1_000_000)
        let idle = store.open(person: "me", tokenID: 1, tokenExpiresAt: nil, now: start)
        #expect(store.session(idle, now: start.addingTimeInterval(59)) != nil)
        #expect(store.session(idle, now: start.addingTimeInterval(59 + 61)) == nil)
        let busy = store.open(person: "me", tokenID: 1, tokenExpiresAt: nil, now: start)
        for minute in 1...4 { #expect(store.session(busy, now: start.addingTimeInterval(Double(minute) * 50)) != nil) }
        #expect(store.session(busy, now: start.addingTimeInterval(301)) == nil)
        let capped = store.open(person: "me", tokenID: 1, tokenExpiresAt: start.addingTimeInterval(30), now: start)
        #expect(store.session(capped, now: start.addingTimeInterval(31)) == nil)
        let ended = store.open(person: "me", tokenID: 1, tokenExpiresAt: nil, now: start)
        store.end(ended)
        #expect(store.session(ended, now: start) == nil)
    }

    @Test("sessions are bounded per person: a person's sign-ins end that person's ended sessions, then their oldest, never another person's")
    func sessionsBoundedPerPerson() {
        let store = SessionStore(idleSeconds: 60, perPerson: 2)
        let now = Date(timeIntervalSince1970: 1_000_000)
        let other = store.open(person: "other", tokenID: 9, tokenExpiresAt: nil, now: now)
        let a = store.open(person: "me", tokenID: 1, tokenExpiresAt: nil, now: now.addingTimeInterval(1))
        let b = store.open(person: "me", tokenID: 1, tokenExpiresAt: nil, now: now.addingTimeInterval(2))
        _ = store.session(a, now: now.addingTimeInterval(3))
        // A thousand sign-ins of one token holder: the other person's session lives on.
        var last = ""
        for i in 0..<1000 { last = store.open(person: "me", tokenID: 1, tokenExpiresAt: nil, now: now.addingTimeInterval(4 + Double(i) / 1000)) }
        #expect(store.count == 3)
        #expect(store.session(other, now: now.addingTimeInterval(10))?.person == "other")
        #expect(store.session(a, now: now.addingTimeInterval(10)) == nil)
        #expect(store.session(b, now: now.addingTimeInterval(10)) == nil)
        #expect(store.session(last, now: now.addingTimeInterval(10)) != nil)
        // The oldest goes by when it was opened, however recently it was seen.
        let c = store.open(person: "you", tokenID: 2, tokenExpiresAt: nil, now: now.addingTimeInterval(20))
        let d = store.open(person: "you", tokenID: 2, tokenExpiresAt: nil, now: now.addingTimeInterval(21))
        _ = store.session(c, now: now.addingTimeInterval(22))
        _ = store.open(person: "you", tokenID: 2, tokenExpiresAt: nil, now: now.addingTimeInterval(23))
        #expect(store.session(c, now: now.addingTimeInterval(24)) == nil)
        #expect(store.session(d, now: now.addingTimeInterval(24)) != nil)
    }

    @Test("after the limit of failures an address waits out the window; other addresses are not held back; nothing clears the count")
    func limiter() {
        let limiter = SignInLimiter(limit: 3, windowSeconds: 600)
        let t0 = Date(timeIntervalSince1970: 5_000)
        for i in 0..<3 {
            #expect(limiter.retryAfter("10.0.0.1", now: t0.addingTimeInterval(Double(i))) == nil)
            limiter.failed("10.0.0.1", now: t0.addingTimeInterval(Double(i)))
        }
        #expect(limiter.retryAfter("10.0.0.1", now: t0.addingTimeInterval(10)) == 590)
        #expect(limiter.retryAfter("10.0.0.2", now: t0.addingTimeInterval(10)) == nil)
        #expect(limiter.retryAfter("10.0.0.1", now: t0.addingTimeInterval(601)) == nil)
        limiter.failed("10.0.0.3", now: t0)
        limiter.failed("10.0.0.3", now: t0)
        #expect(limiter.retryAfter("10.0.0.3", now: t0) == nil)
    }

    @Test("cookies, form fields and origins are read exactly")
    func requestParts() {
        #expect(RequestParts.cookie("hw_session", in: "a=1; hw_session=abc-_9; b=2") == "abc-_9")
        #expect(RequestParts.cookie("hw_session", in: "xhw_session=abc") == nil)
        #expect(RequestParts.cookie("hw_session", in: nil) == nil)
        #expect(RequestParts.form(Array("token=hw_a%2Bb+c&x=".utf8)) == ["token": "hw_a+b c", "x": ""])
        #expect(RequestParts.form(Array("token=%ZZ".utf8)) == nil)
        #expect(RequestParts.form([0xff, 0xfe]) == nil)
        #expect(RequestParts.sameOrigin(origin: "http://127.0.0.1:8080", host: "127.0.0.1:8080"))
        #expect(RequestParts.sameOrigin(origin: "https://health.example", host: "health.example"))
        #expect(!RequestParts.sameOrigin(origin: "http://evil.example", host: "127.0.0.1:8080"))
        #expect(!RequestParts.sameOrigin(origin: "null", host: "127.0.0.1:8080"))
        #expect(!RequestParts.sameOrigin(origin: nil, host: "127.0.0.1:8080"))
        #expect(!RequestParts.sameOrigin(origin: "http://127.0.0.1:8080.evil", host: "127.0.0.1:8080"))
    }
}
