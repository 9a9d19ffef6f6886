/// How the page signs people in.
public struct WebUIConfiguration: Sendable {
    /// The listener speaks TLS (`serve --tls-cert`): the session cookie is then `Secure`. A
    /// request that says it came through a TLS proxy (`X-Forwarded-Proto: https`) gets a
    /// `Secure` cookie too (it can only make the cookie stricter).
    public var secureCookies: Bool
    /// The listener is on loopback: while no token has been minted, the page is open for
    /// person `default` without signing in (unless the request came through a proxy).
    public var openWithoutTokens: Bool
    /// The signed-in browsers.
    public var sessions: SessionStore
    /// Failed sign-ins per address.
    public var limiter: SignInLimiter

    public init(secureCookies: Bool, openWithoutTokens: Bool, sessions: SessionStore = SessionStore(),
                limiter: SignInLimiter = SignInLimiter()) {
        self.secureCookies = secureCookies
        self.openWithoutTokens = openWithoutTokens
        self.sessions = sessions
        self.limiter = limiter
    }
}
