import Postgres

extension PageReader {
    /// What the views leave out for `person`, all time: coalescings, quarantined samples by
    /// reason, deleted samples (once `health.deleted_samples` exists and may be read), and
    /// samples of unknown types.
    func leftOut(person: String) throws -> LeftOut {
        var out = LeftOut()
        out.coalesced = try counts("""
            SELECT type, count(*) FROM health.coalesced_samples WHERE person = $1 AND NOT counted
            GROUP BY type ORDER BY count(*) DESC, type COLLATE "C"
            """, person)
        out.quarantined = try counts("""
            SELECT reason, count(*) FROM health.quarantine WHERE person = $1
            GROUP BY reason ORDER BY count(*) DESC, reason COLLATE "C" LIMIT 20
            """, person)
        out.unknown = try counts("""
            SELECT type, samples FROM health.unknown_types WHERE person = $1 ORDER BY samples DESC, type COLLATE "C"
            """, person)
        // CONTRACT.md §6 adds this view; until a migration makes it, the page says nothing of deletions.
        let readable: Bool = try connection.query("""
            SELECT to_regclass('health.deleted_samples') IS NOT NULL
                   AND has_table_privilege('health.deleted_samples', 'SELECT')
            """).first?.decode(0) ?? false
        if readable {
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
