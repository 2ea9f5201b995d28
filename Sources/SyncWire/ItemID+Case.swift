extension ItemID {
    /// Whether two ids name one item: ids are one item whatever the case of their ASCII letters
    /// (`ONE` is `one`, as SQL Server compares them), and differ in anything else (`É` and `é`
    /// are two ids). Compared code point by code point, as the server's database compares them.
    ///
    /// - Parameters:
    ///   - a: An id.
    ///   - b: Another id.
    /// - Returns: `true` when they are equal once ASCII letters are folded to lower case.
    public static func sameItem(_ a: String, _ b: String) -> Bool {
        a.unicodeScalars.elementsEqual(b.unicodeScalars) { folded($0) == folded($1) }
    }

    private static func folded(_ scalar: Unicode.Scalar) -> UInt32 {
        ("A"..."Z").contains(scalar) ? scalar.value + 0x20 : scalar.value
    }
}
