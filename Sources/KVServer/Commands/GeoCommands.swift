// GeoCommands.swift: GEOADD, GEOPOS, GEODIST and GEOHASH, Redis's way: a
// position is a member of a sorted set whose score is its 52-bit geohash
// (Geohash.swift); GEOADD adds them by ZADD itself, and the readers decode
// the score back to the centre of its cell. The searches are in
// GeoSearch.swift.
import Glibc

let geoCommands: [Command] =
    [
        Command("geoadd", arity: -5, keys: .one, geoadd),
        Command("geopos", arity: -2, keys: .one, geopos),
        Command("geodist", arity: -4, keys: .one, geodist),
        Command("geohash", arity: -2, keys: .one, geohashCommand),
    ] + geoSearchCommands

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
        guard let hash = Geohash.encode(longitude: longitude, latitude: latitude, step: 26) else {
            return out.error(invalidPositionError(longitude, latitude))
        }
        zadd.appendArgument(Array(String(hash.bits).utf8))
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

/// Redis's error for a position outside its bounds.
func invalidPositionError(_ longitude: Double, _ latitude: Double) -> String {
    "ERR invalid longitude,latitude pair \(cFixed(longitude)),\(cFixed(latitude))"
}

/// Runs `present` with the position of each member named from argument
/// 2 on (GEOPOS, GEOHASH), `missing` for one absent (or all, the key
/// absent), after the array's header.
private func eachPosition(
    _ ks: Keyspace, _ r: Request, _ out: inout ReplyWriter, missing: (inout ReplyWriter) -> Void,
    _ present: (Double, Double, inout ReplyWriter) -> Void
) {
    guard let sortedSet = ks.lookupSortedSet(r.raw(1), &out) else { return }
    out.arrayHeader(r.count - 2)
    for index in 2..<r.count {
        guard let score = sortedSet?.score(of: r.raw(index)) else {
            missing(&out)
            continue
        }
        let (longitude, latitude) = Geohash.position(of: score)
        present(longitude, latitude, &out)
    }
}

/// GEOPOS key member...: each member's position, nil for one absent.
private func geopos(_ ks: Keyspace, _ r: Request, _ out: inout ReplyWriter) {
    eachPosition(ks, r, &out, missing: { $0.nullArray() }) { longitude, latitude, out in
        out.arrayHeader(2)
        replyCoordinate(longitude, &out)
        replyCoordinate(latitude, &out)
    }
}

/// A coordinate as Redis's addReplyHumanLongDouble writes it.
func replyCoordinate(_ value: Double, _ out: inout ReplyWriter) {
    humanReadable(Float80(value)).withUnsafeBytes { out.double(text: $0) }
}

/// A distance as Redis writes one: four decimals, rounded as llrint rounds
/// the value times 10,000 (its fixedpoint_d2string), a bulk string in
/// both protocols.
func replyDistance(_ value: Double, _ out: inout ReplyWriter) {
    out.bulk(fixedPoint(value))
}

/// Redis's fixedpoint_d2string with four decimals.
func fixedPoint(_ value: Double) -> String {
    if value == 0 { return "0.0000" }
    let scaled = (value * 10_000).rounded(.toNearestOrEven)
    // llrint of what a long long cannot hold gives its lowest value.
    let units = scaled.isFinite && abs(scaled) < 0x1p63 ? Int64(scaled) : Int64.min
    let magnitude = units.magnitude
    let fraction = String(magnitude % 10_000)
    let sign = units < 0 ? "-" : ""
    return "\(sign)\(magnitude / 10_000)." + String(repeating: "0", count: 4 - fraction.count) + fraction
}

/// The metres in one of Redis's units (m, km, ft, mi), nil for another.
func metres(inUnit unit: UnsafeRawBufferPointer) -> Double? {
    if equalsIgnoringCase(unit, "m") { return 1 }
    if equalsIgnoringCase(unit, "km") { return 1000 }
    if equalsIgnoringCase(unit, "ft") { return 0.3048 }
    if equalsIgnoringCase(unit, "mi") { return 1609.34 }
    return nil
}

let unsupportedUnitError = "ERR unsupported unit provided. please use M, KM, FT, MI"

/// GEODIST key member member [unit]: nil when the key or either member
/// is absent.
private func geodist(_ ks: Keyspace, _ r: Request, _ out: inout ReplyWriter) {
    var unit = 1.0
    if r.count == 5 {
        guard let metres = metres(inUnit: r.raw(4)) else { return out.error(unsupportedUnitError) }
        unit = metres
    } else if r.count > 5 {
        return out.error("ERR syntax error")
    }
    guard let found = ks.lookupSortedSet(r.raw(1), &out) else { return }
    guard let sortedSet = found, let first = sortedSet.score(of: r.raw(2)), let second = sortedSet.score(of: r.raw(3))
    else { return out.null() }
    let (longitude1, latitude1) = Geohash.position(of: first)
    let (longitude2, latitude2) = Geohash.position(of: second)
    replyDistance(Geohash.distance(longitude1, latitude1, longitude2, latitude2) / unit, &out)
}

/// GEOHASH key member...: each position as the standard 11-character
/// geohash (latitudes over ±90, so re-encoded from the decoded position;
/// the 11th character stands for bits Redis does not keep: 0).
private func geohashCommand(_ ks: Keyspace, _ r: Request, _ out: inout ReplyWriter) {
    let alphabet = Array("0123456789bcdefghjkmnpqrstuvwxyz".utf8)
    eachPosition(ks, r, &out, missing: { $0.null() }) { longitude, latitude, out in
        let bits =
            Geohash.encode(
                longitude: longitude, latitude: latitude, step: 26, longitudeRange: -180...180,
                latitudeRange: -90...90)?.bits ?? 0
        var text: [UInt8] = []
        for position in 0..<10 {
            let shift = UInt64(52 - (position + 1) * 5)
            text.append(alphabet[Int(truncatingIfNeeded: bits >> shift & 0x1f)])
        }
        text.append(alphabet[0])
        out.bulk(text)
    }
}

/// C's "%f": six decimals.
func cFixed(_ value: Double) -> String {
    withUnsafeTemporaryAllocation(of: CChar.self, capacity: 400) { buffer in
        withVaList([value]) { _ = vsnprintf(buffer.baseAddress!, 400, "%f", $0) }
        return String(cString: buffer.baseAddress!)
    }
}
