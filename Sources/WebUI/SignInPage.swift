/// The sign-in form, and the short pages that say why something cannot be shown.
enum SignInPage {
    /// The form, with `message` (already HTML) above it when a sign-in failed.
    static func render(message: String?, hint: String? = nil) -> String {
        var main = "<h1>Sign in</h1>"
        if let message { main += "<p class=\"error\" role=\"alert\" id=\"sign-in-error\">\(message)</p>" }
        main += """
            <form method="post" action="/ui/sign-in" class="sign-in"><label for="token">Token</label>\
            <input id="token" name="token" type="password" autocomplete="current-password" required spellcheck="false">\
            <button type="submit">Sign in</button></form>\
            <p class="note">Use a token minted with <code>health-warehouse token create --person NAME</code>: \
            the page then shows that person's days, and nobody else's.</p>
            """
        if let hint { main += "<p class=\"note\">\(hint)</p>" }
        return PageLayout.document(title: "Health Warehouse: sign in", person: nil, period: nil, signOut: false, main: main)
    }

    /// A page that only says `message` (already HTML).
    static func notice(title: String, message: String, signOut: Bool = false) -> String {
        PageLayout.document(title: "Health Warehouse: \(title)", person: nil, period: nil, signOut: signOut,
                            main: "<h1>\(HTML.escape(title))</h1><p>\(message)</p><p><a href=\"/ui\">Back to the days</a></p>")
    }
}
