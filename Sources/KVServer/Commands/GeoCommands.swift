// GeoCommands.swift: GEOADD, Redis's way: each longitude/latitude pair is
// turned into its 52-bit geohash (26 bits each, interleaved: latitude on
// the even bits, longitude on the odd ones), and the members go into a
// sorted set with that score, by ZADD itself. The other GEO commands
// (GEOPOS, GEODIST, GEOSEARCH, ...) are not in kvd yet.
import Glibc

let geoCommands: [Command] = [
    Command("geoadd", arity: -5, keys: .one, geoadd)
]

/// Redis's bounds: the latitudes Web Mercator can show.
private let longitudeRange = -180.0...180.0
private let latitudeRange = -85.05112878...85.05112878

private func geoadd(_ ks: Keyspace, _ r: Request, _ out: inout ReplyWriter) {
    var (nx, xx, first) = (false, false, 2)
    while first < r.count {
        if equalsIgnoringCase(r.raw(first), "nx") {
            nx = true
        } else if equalsIgnoringCase(r.raw(first), "xx") {
            xx = true
        } else if !equalsIgnoringCase(r.raw(first), "ch") {
            break
        }
        first += 1
    }
    guard (r.count - first) % 3 == 0, !(nx && xx) else { return out.error("ERR syntax error") }
    // ZADD key [options] score member ..., the scores being the geohashes.
    var zadd = RequestBatch()
    zadd.appendArgument(Array("zadd".utf8))
    for index in 1..<first { zadd.appendArgument(r[index]) }
    for position in stride(from: first, to: r.count, by: 3) {
        guard let longitude = parseDouble(r.raw(position)), let latitude = parseDouble(r.raw(position + 1)) else {
            return out.error("ERR value is not a valid float")
        }
        guard longitudeRange.contains(longitude), latitudeRange.contains(latitude) else {
            return out.error("ERR invalid longitude,latitude pair \(cFixed(longitude)),\(cFixed(latitude))")
        }
        zadd.appendArgument(Array(String(geohash(longitude: longitude, latitude: latitude)).utf8))
        zadd.appendArgument(r[position + 2])
    }
    zadd.endRequest()
    guard let row = Dispatcher.command(named: Array("zadd".utf8)), case .keyspace(let handler) = row.handler else {
        return
    }
    zadd.forEach { request in
        handler(ks, request, &out)
        return false
    }
}

/// The 52-bit geohash Redis scores a position with.
func geohash(longitude: Double, latitude: Double) -> UInt64 {
    let scale = Double(UInt64(1) << 26)
    let latitudeOffset = (latitude - latitudeRange.lowerBound) / (latitudeRange.upperBound - latitudeRange.lowerBound)
    let longitudeOffset =
        (longitude - longitudeRange.lowerBound) / (longitudeRange.upperBound - longitudeRange.lowerBound)
    // C's conversion to a 32-bit unsigned integer: truncation.
    return spreadBits(UInt32(truncatingIfNeeded: UInt64(latitudeOffset * scale)))
        | spreadBits(UInt32(truncatingIfNeeded: UInt64(longitudeOffset * scale))) << 1
}

/// The 32 bits of `value` on the even bits of the result.
private func spreadBits(_ value: UInt32) -> UInt64 {
    var bits = UInt64(value)
    bits = (bits | bits << 16) & 0x0000_FFFF_0000_FFFF
    bits = (bits | bits << 8) & 0x00FF_00FF_00FF_00FF
    bits = (bits | bits << 4) & 0x0F0F_0F0F_0F0F_0F0F
    bits = (bits | bits << 2) & 0x3333_3333_3333_3333
    bits = (bits | bits << 1) & 0x5555_5555_5555_5555
    return bits
}

/// C's "%f": six decimals.
private func cFixed(_ value: Double) -> String {
    withUnsafeTemporaryAllocation(of: CChar.self, capacity: 400) { buffer in
        withVaList([value]) { _ = vsnprintf(buffer.baseAddress!, 400, "%f", $0) }
        return String(cString: buffer.baseAddress!)
    }
}
