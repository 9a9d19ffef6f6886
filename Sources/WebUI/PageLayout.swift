/// The frame every page shares: head (stylesheet and icon from /ui, nothing from elsewhere),
/// a skip link, the header with the person, the period chooser and sign-out, and the footer.
enum PageLayout {
    /// The periods the chooser offers, in days.
    static let periods = [30, 90, 365]

    /// A whole HTML document around `main` (already HTML).
    static func document(title: String, person: String?, period: Int?, signOut: Bool, main: String) -> String {
        var out = """
            <!doctype html><html lang="en"><head><meta charset="utf-8">\
            <meta name="viewport" content="width=device-width, initial-scale=1">\
            <title>\(HTML.escape(title))</title><link rel="stylesheet" href="/ui/style.css">\
            <link rel="icon" href="/ui/icon.svg" type="image/svg+xml"></head><body>\
            <a class="skip" href="#main">Skip to content</a><header><p class="brand">Health Warehouse</p>
            """
        if let person {
            out += "<p class=\"person\">Signed in as <strong>\(HTML.escape(person))</strong></p>"
        }
        if let period {
            out += "<nav aria-label=\"Period\"><ul>"
            for days in periods {
                out += days == period ? "<li><a href=\"/ui/days/\(days)\" aria-current=\"page\">\(days) days</a></li>"
                    : "<li><a href=\"/ui/days/\(days)\">\(days) days</a></li>"
            }
            out += "</ul></nav>"
        }
        if signOut {
            out += "<form method=\"post\" action=\"/ui/sign-out\" class=\"sign-out\"><button type=\"submit\">Sign out</button></form>"
        }
        out += "</header><main id=\"main\">" + main + "</main><footer><p>Data arrives in batches when iOS lets the healthd app run, "
            + "typically within an hour; this page shows what has arrived, read from the warehouse's <code>health</code> views.</p></footer></body></html>"
        return out
    }
}
