/// The page's only other resources, served from /ui by this binary: nothing is fetched from
/// another origin (`Content-Security-Policy: default-src 'self'`), and no script exists.
enum Assets {
    /// `/ui/style.css`: a phone-first layout that widens on a desktop; the system's own fonts.
    static let stylesheet = """
        :root{--ink:#1b1f24;--muted:#59636e;--line:#d0d7de;--bg:#fff;--accent:#0b5cad;--bar:#2f7dc4;--warn:#fff4d6;--warn-line:#d4a72c}
        *{box-sizing:border-box}
        body{margin:0;font:16px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:var(--ink);background:var(--bg)}
        header{display:flex;flex-wrap:wrap;align-items:center;gap:.5rem 1rem;padding:.6rem 1rem;border-bottom:1px solid var(--line);background:#f6f8fa}
        header p{margin:0}.brand{font-weight:700}
        nav ul{display:flex;gap:.25rem;list-style:none;margin:0;padding:0}
        nav a{display:inline-block;padding:.35rem .6rem;border:1px solid var(--line);border-radius:6px;color:var(--accent);text-decoration:none;background:#fff}
        nav a[aria-current=page]{background:var(--accent);color:#fff;border-color:var(--accent)}
        .sign-out{margin-left:auto}
        button,input{font:inherit}
        button{padding:.4rem .8rem;border:1px solid var(--accent);border-radius:6px;background:var(--accent);color:#fff;cursor:pointer}
        .sign-out button{background:#fff;color:var(--accent)}
        a:focus-visible,button:focus-visible,input:focus-visible,.scroll:focus-visible{outline:3px solid #f0a500;outline-offset:2px}
        .skip{position:absolute;left:-999px}.skip:focus{left:1rem;top:.5rem;background:#fff;padding:.4rem;z-index:2}
        main{padding:0 1rem 2rem;max-width:1200px;margin:0 auto}
        h1{font-size:1.35rem;margin:1rem 0 .3rem}h2{font-size:1.1rem;margin:1.6rem 0 .4rem}
        .note,footer{color:var(--muted);font-size:.9rem}footer{padding:1rem;border-top:1px solid var(--line)}
        .facts{display:grid;grid-template-columns:1fr;gap:.3rem;margin:0}.facts div{display:flex;flex-wrap:wrap;gap:.2rem .6rem}
        .facts dt{font-weight:600}.facts dd{margin:0}
        .stale{background:var(--warn);border:1px solid var(--warn-line);border-radius:6px;padding:.5rem .8rem;margin:.6rem 0}
        .charts{display:grid;grid-template-columns:1fr;gap:1rem}
        figure{margin:0}figcaption{font-size:.9rem;margin-bottom:.2rem}
        svg{width:100%;height:auto;display:block}
        .axis line{stroke:var(--line);stroke-width:1}.axis text{font-size:11px;fill:var(--muted)}
        path.m{fill:none;stroke:var(--bar)}.m.s1{stroke:#174f86}.m.s2{stroke:#7fb2e5}.m.s3{stroke:#9aa7b4}.dots{stroke-linecap:round}
        .partial{fill:#fff;stroke:var(--bar);stroke-width:1.5;stroke-dasharray:3 2}
        .trend{fill:none;stroke:var(--bar);stroke-width:1.5;opacity:.6}
        #heart-rate svg{max-width:760px}
        .hr{fill:none;stroke:#c2410c;stroke-width:2}
        .route{max-width:420px;border:1px solid var(--line);border-radius:6px;background:#fbfcfd}
        .route-line{fill:none;stroke:#c2410c;stroke-width:3;stroke-linejoin:round}.start{fill:#15803d}.end{fill:#1b1f24}
        .key{font-size:.85rem;color:var(--muted);margin:.2rem 0}.k{display:inline-block;width:.8rem;height:.8rem;margin:0 .2rem 0 .5rem;background:var(--bar);vertical-align:-1px}
        .k.s1{background:#174f86}.k.s2{background:#7fb2e5}.k.s3{background:#9aa7b4}
        .scroll{overflow-x:auto;border:1px solid var(--line);border-radius:6px}
        table{border-collapse:collapse;font-size:.9rem;width:100%}
        th,td{padding:.3rem .5rem;border-bottom:1px solid var(--line);text-align:right;white-space:nowrap}
        tbody th,thead th:first-child{text-align:left;position:sticky;left:0;background:#fff}thead th{background:#f6f8fa}
        #days,#sources,#sleep,#healthkit,#workout-list,#left-out{content-visibility:auto;contain-intrinsic-size:auto 1200px}
        tr.partial th,tr.partial td{background:#f3f8fd}
        .gap{color:var(--muted);font-style:italic}
        .tag{font-size:.75rem;border:1px solid var(--line);border-radius:4px;padding:0 .25rem;color:var(--muted);font-weight:400}
        .sources{display:grid;grid-template-columns:1fr;gap:.15rem;margin:.4rem 0;font-size:.85rem}.sources div{display:flex;gap:.5rem}
        .sources dt{font-weight:700;min-width:1.5rem}.sources dd{margin:0;word-break:break-all}
        .named{text-decoration:underline dotted;cursor:help}
        form.sign-in{display:grid;gap:.5rem;max-width:26rem}form.sign-in input{padding:.45rem;border:1px solid var(--muted);border-radius:6px}
        .error{color:#a40e26;font-weight:600}
        @media (max-width:600px){.axis text{font-size:19px}}
        @media (min-width:900px){.charts{grid-template-columns:1fr 1fr}.facts{grid-template-columns:1fr 1fr}}
        """

    /// `/ui/icon.svg`: the tab's icon, so the browser does not ask the receiver for /favicon.ico.
    static let icon = """
        <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#0b5cad"/>\
        <path d="M3 9h2.5l1.5-4 2 7 1.5-3H13" fill="none" stroke="#fff" stroke-width="1.6"/></svg>
        """
}
