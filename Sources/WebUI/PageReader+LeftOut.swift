import Postgres

extension PageReader {
    /// What the views leave out for `person`, all time, in one statement: coalescings by type,
    /// quarantined samples by reason (the 20 most frequent), samples of unknown types, and
    /// whether `health.deleted_samples` exists and may be read (then one statement more).
    func leftOut(person: String) throws -> LeftOut {
        var out = LeftOut()
        var deletedReadable = false
        for row in try connection.query("""
            (SELECT 'coalesced' AS part, type AS what, count(*)::bigint AS n FROM health.coalesced_samples
             WHERE person = $1 AND NOT counted GROUP BY type)
            UNION ALL
            (SELECT 'quarantined', reason, count(*) FROM health.quarantine WHERE person = $1
             GROUP BY reason ORDER BY count(*) DESC, reason COLLATE "C" LIMIT 20)
            UNION ALL
            (SELECT 'unknown', type, samples FROM health.unknown_types WHERE person = $1)
            UNION ALL
            -- A database migrated before deletions has no such view: the page then says nothing of them.
            SELECT 'deleted view', NULL, 1 WHERE to_regclass('health.deleted_samples') IS NOT NULL
                                             AND has_table_privilege('health.deleted_samples', 'SELECT')
            """, [person]) {
            let part: String = try row.decode(0)
            let entry = (try row.decodeIfPresent(1, as: String.self) ?? "", try row.decode(2, as: Int.self))
            switch part {
            case "coalesced": out.coalesced.append(entry)
            case "quarantined": out.quarantined.append(entry)
            case "unknown": out.unknown.append(entry)
            default: deletedReadable = true
            }
        }
        let order: ((String, Int), (String, Int)) -> Bool = { $0.1 != $1.1 ? $0.1 > $1.1 : $0.0.utf8.lexicographicallyPrecedes($1.0.utf8) }
        (out.coalesced, out.quarantined, out.unknown) = (out.coalesced.sorted(by: order), out.quarantined.sorted(by: order),
                                                         out.unknown.sorted(by: order))
        if deletedReadable {
            out.deleted = try counts("""
                SELECT type, count(*) FROM health.deleted_samples WHERE person = $1
                GROUP BY type ORDER BY count(*) DESC, type COLLATE "C"
                """, person)
        }
        return out
    }

    private func counts(_ sql: String, _ person: String) throws -> [(String, Int)] {
        try connection.query(sql, [person]).map { (try $0.decode(0), try $0.decode(1)) }
    }
}
