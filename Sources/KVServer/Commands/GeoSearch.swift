// GeoSearch.swift: GEOSEARCH, GEOSEARCHSTORE, GEORADIUS,
// GEORADIUSBYMEMBER and their _RO forms, as Redis 7.0's georadiusGeneric
// answers them: the options and their errors in Redis's order; the shape
// (a circle or a box) covered by a geohash box and its neighbours
// (Geohash.swift), each read from the sorted set as a score range in
// Redis's order, so that an unsorted answer lists members as Redis does;
// then ANY, COUNT, ASC or DESC (a stable sort by distance, as glibc's
// qsort; Redis's partial quicksort when COUNT keeps fewer), and the reply
// or the stored sorted set.
import Glibc

let geoSearchCommands: [Command] = [
    Command("georadius", arity: -6, keys: .one) { geoSearch($0, $1, &$2, source: 1, .byCoordinates) },
    Command("georadius_ro", arity: -6, keys: .one) { geoSearch($0, $1, &$2, source: 1, [.byCoordinates, .noStore]) },
    Command("georadiusbymember", arity: -5, keys: .one) { geoSearch($0, $1, &$2, source: 1, .byMember) },
    Command("georadiusbymember_ro", arity: -5, keys: .one) {
        geoSearch($0, $1, &$2, source: 1, [.byMember, .noStore])
    },
    Command("geosearch", arity: -7, keys: .one) { geoSearch($0, $1, &$2, source: 1, .search) },
    Command("geosearchstore", arity: -8, keys: .one) { geoSearch($0, $1, &$2, source: 2, [.search, .searchStore]) },
]

/// Which of the search commands runs (Redis's flags).
private struct SearchKind: OptionSet {
    let rawValue: Int
    static let byCoordinates = SearchKind(rawValue: 1)
    static let byMember = SearchKind(rawValue: 2)
    static let noStore = SearchKind(rawValue: 4)
    static let search = SearchKind(rawValue: 8)
    static let searchStore = SearchKind(rawValue: 16)
}

/// What a search covers: its centre, a circle or a box (in the unit
/// given), and the metres in that unit.
private struct SearchShape {
    var longitude = 0.0
    var latitude = 0.0
    var radius: Double?
    var box: (width: Double, height: Double)?
    var unit = 1.0

    /// Whether a position is inside, and its distance from the centre (metres).
    func distance(toLongitude longitude: Double, latitude: Double) -> Double? {
        if let radius {
            let distance = Geohash.distance(self.longitude, self.latitude, longitude, latitude)
            return distance > radius * unit ? nil : distance
        }
        guard let box else { return nil }
        // The latitude first: it is the cheaper to compute.
        guard Geohash.latitudeDistance(latitude, self.latitude) <= box.height * unit / 2,
            Geohash.distance(longitude, latitude, self.longitude, latitude) <= box.width * unit / 2
        else { return nil }
        return Geohash.distance(self.longitude, self.latitude, longitude, latitude)
    }
}

/// A member found, with its score, position and distance (metres).
private struct GeoPoint {
    var member: [UInt8]
    var score: Double
    var longitude: Double
    var latitude: Double
    var distance: Double
}

/// A number argument as Redis's getDoubleFromObjectOrReply reads it.
private func number(_ bytes: UnsafeRawBufferPointer, _ message: String, _ out: inout ReplyWriter) -> Double? {
    guard let value = parseDouble(bytes) else {
        out.error("ERR " + message)
        return nil
    }
    return value
}

/// A longitude and latitude pair at `index`, checked against Redis's bounds.
private func position(_ r: Request, at index: Int, _ out: inout ReplyWriter) -> (Double, Double)? {
    guard let longitude = number(r.raw(index), "value is not a valid float", &out),
        let latitude = number(r.raw(index + 1), "value is not a valid float", &out)
    else { return nil }
    guard geoLongitudes.contains(longitude), geoLatitudes.contains(latitude) else {
        out.error(invalidPositionError(longitude, latitude))
        return nil
    }
    return (longitude, latitude)
}

/// A distance and its unit at `index`: the distance and the unit's metres.
private func radius(_ r: Request, at index: Int, _ out: inout ReplyWriter) -> (Double, Double)? {
    guard let radius = number(r.raw(index), "need numeric radius", &out) else { return nil }
    guard radius >= 0 else {
        out.error("ERR radius cannot be negative")
        return nil
    }
    guard let unit = metres(inUnit: r.raw(index + 1)) else {
        out.error(unsupportedUnitError)
        return nil
    }
    return (radius, unit)
}

/// Redis's georadiusGeneric: `source` is the sorted set's argument.
private func geoSearch(_ ks: Keyspace, _ r: Request, _ out: inout ReplyWriter, source: Int, _ kind: SearchKind) {
    guard let found = ks.lookupSortedSet(r.raw(source), use: .read, &out) else { return }
    var shape = SearchShape()
    var firstOption: Int
    var storeKey: Int?
    var storeDistance = false
    if kind.contains(.byCoordinates) {
        firstOption = 6
        guard let (longitude, latitude) = position(r, at: 2, &out) else { return }
        (shape.longitude, shape.latitude) = (longitude, latitude)
        guard let (distance, unit) = radius(r, at: 4, &out) else { return }
        (shape.radius, shape.unit) = (distance, unit)
    } else if kind.contains(.byMember) {
        firstOption = 5
        // Without the key, the options are still read, for the reply's kind.
        if let sortedSet = found {
            guard let score = sortedSet.score(of: r.raw(2)) else {
                return out.error("ERR could not decode requested zset member")
            }
            (shape.longitude, shape.latitude) = Geohash.position(of: score)
            guard let (distance, unit) = radius(r, at: 3, &out) else { return }
            (shape.radius, shape.unit) = (distance, unit)
        }
    } else {
        firstOption = kind.contains(.searchStore) ? 3 : 2
        if kind.contains(.searchStore) { storeKey = 1 }
    }
    var (withDistance, withHash, withCoordinates, any) = (false, false, false, false)
    var (fromMember, fromPosition, byRadius, byBox) = (false, false, false, false)
    var descending: Bool?
    var count = 0
    var index = firstOption
    while index < r.count {
        let option = r.raw(index)
        let remaining = r.count - index - 1
        let search = kind.contains(.search)
        if equalsIgnoringCase(option, "withdist") {
            withDistance = true
        } else if equalsIgnoringCase(option, "withhash") {
            withHash = true
        } else if equalsIgnoringCase(option, "withcoord") {
            withCoordinates = true
        } else if equalsIgnoringCase(option, "any") {
            any = true
        } else if equalsIgnoringCase(option, "asc") {
            descending = false
        } else if equalsIgnoringCase(option, "desc") {
            descending = true
        } else if equalsIgnoringCase(option, "count") && remaining >= 1 {
            guard let value = parseInteger(r.raw(index + 1)) else {
                return out.error("ERR value is not an integer or out of range")
            }
            guard value > 0 else { return out.error("ERR COUNT must be > 0") }
            count = value
            index += 1
        } else if (equalsIgnoringCase(option, "store") || equalsIgnoringCase(option, "storedist")) && remaining >= 1
            && !kind.contains(.noStore) && !search
        {
            storeKey = index + 1
            storeDistance = equalsIgnoringCase(option, "storedist")
            index += 1
        } else if equalsIgnoringCase(option, "storedist") && kind.contains(.searchStore) {
            storeDistance = true
        } else if equalsIgnoringCase(option, "frommember") && remaining >= 1 && search && !fromPosition {
            if let sortedSet = found {
                guard let score = sortedSet.score(of: r.raw(index + 1)) else {
                    return out.error("ERR could not decode requested zset member")
                }
                (shape.longitude, shape.latitude) = Geohash.position(of: score)
            }
            fromMember = true
            index += 1
        } else if equalsIgnoringCase(option, "fromlonlat") && remaining >= 2 && search && !fromMember {
            guard let (longitude, latitude) = position(r, at: index + 1, &out) else { return }
            (shape.longitude, shape.latitude) = (longitude, latitude)
            fromPosition = true
            index += 2
        } else if equalsIgnoringCase(option, "byradius") && remaining >= 2 && search && !byBox {
            guard let (distance, unit) = radius(r, at: index + 1, &out) else { return }
            (shape.radius, shape.unit) = (distance, unit)
            byRadius = true
            index += 2
        } else if equalsIgnoringCase(option, "bybox") && remaining >= 3 && search && !byRadius {
            guard let width = number(r.raw(index + 1), "need numeric width", &out),
                let height = number(r.raw(index + 2), "need numeric height", &out)
            else { return }
            guard width >= 0, height >= 0 else { return out.error("ERR height or width cannot be negative") }
            guard let unit = metres(inUnit: r.raw(index + 3)) else { return out.error(unsupportedUnitError) }
            (shape.box, shape.unit) = ((width, height), unit)
            byBox = true
            index += 3
        } else {
            return out.error("ERR syntax error")
        }
        index += 1
    }
    if storeKey != nil && (withDistance || withHash || withCoordinates) {
        let what = kind.contains(.searchStore) ? "GEOSEARCHSTORE" : "STORE option in GEORADIUS"
        return out.error("ERR \(what) is not compatible with WITHDIST, WITHHASH and WITHCOORD options")
    }
    let name = String(decoding: r[0], as: UTF8.self)
    if kind.contains(.search) && !(fromMember || fromPosition) {
        return out.error("ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for \(name)")
    }
    if kind.contains(.search) && !(byRadius || byBox) {
        return out.error("ERR exactly one of BYRADIUS and BYBOX can be specified for \(name)")
    }
    if any && count == 0 { return out.error("ERR the ANY argument requires COUNT argument") }
    guard let sortedSet = found else {
        guard let storeKey else { return out.arrayHeader(0) }
        if ks.remove(r.raw(storeKey)) { ks.notify(.generic, "del", r.raw(storeKey)) }
        return out.integer(0)
    }
    // COUNT without an order means the nearest (not with ANY).
    if count != 0 && descending == nil && !any { descending = false }
    var points = members(of: sortedSet, in: shape, limit: any ? count : 0)
    if points.isEmpty && storeKey == nil { return out.arrayHeader(0) }
    if let descending {
        if count > 0 && count < points.count {
            // Redis sorts only what COUNT keeps, with pqsort: the same swaps
            // keep the same members among those at equal distances.
            partialQuickSort(&points, keeping: 0, through: count - 1) { x, y in
                let order = x.distance > y.distance ? 1 : (x.distance == y.distance ? 0 : -1)
                return descending ? -order : order
            }
        } else {
            // Stable, as glibc's qsort (a merge sort) sorts Redis's array.
            points.sort { descending ? $0.distance > $1.distance : $0.distance < $1.distance }
        }
    }
    if count > 0 && points.count > count { points.removeLast(points.count - count) }
    if let storeKey {
        let members = points.map { ($0.member, storeDistance ? $0.distance / shape.unit : $0.score) }
        storeSortedSet(
            ks, r.raw(storeKey), members, kind.contains(.search) ? "geosearchstore" : "georadiusstore")
        // Redis counts a change per member stored.
        if members.count > 1 { ks.fence.changes += members.count - 1 }
        return out.integer(members.count)
    }
    let extras = (withDistance ? 1 : 0) + (withHash ? 1 : 0) + (withCoordinates ? 1 : 0)
    out.arrayHeader(points.count)
    for point in points {
        if extras > 0 { out.arrayHeader(extras + 1) }
        out.bulk(point.member)
        if withDistance { replyDistance(point.distance / shape.unit, &out) }
        if withHash { out.integer(Int(cInt64(point.score))) }
        if withCoordinates {
            out.arrayHeader(2)
            replyCoordinate(point.longitude, &out)
            replyCoordinate(point.latitude, &out)
        }
    }
}

/// C's `(long long)` of a double on x86-64: its lowest value for what it cannot hold.
private func cInt64(_ value: Double) -> Int64 {
    value > -0x1p63 && value < 0x1p63 ? Int64(value) : .min
}

/// The members inside `shape`: the nine boxes Redis reads, in its order
/// (the centre's, then north, south, east, west, north-east, north-west,
/// south-east, south-west), each a score range read in order; with
/// `limit` (ANY), stopping once that many are found.
private func members(of sortedSet: SortedSetValue, in shape: SearchShape, limit: Int) -> [GeoPoint] {
    var points: [GeoPoint] = []
    let boxes = searchBoxes(shape)
    var lastProcessed = 0
    for (position, box) in boxes.enumerated() where box != .zero {
        // A huge radius can make neighbours the same box as the one before.
        if lastProcessed != 0 && box == boxes[lastProcessed] { continue }
        if limit > 0 && points.count >= limit { break }
        let shift = UInt64(52 - box.step * 2)
        let minimum = Double(box.bits << shift)
        let maximum = Double((box.bits &+ 1) << shift)
        var node = sortedSet.order.first(notBelow: { $0.score < minimum })
        while let current = node, current.score < maximum {
            let (longitude, latitude) = Geohash.position(of: current.score)
            if let distance = shape.distance(toLongitude: longitude, latitude: latitude) {
                points.append(
                    GeoPoint(
                        member: current.member, score: current.score, longitude: longitude, latitude: latitude,
                        distance: distance))
            }
            if limit > 0 && points.count >= limit { break }
            node = current.next
        }
        lastProcessed = position
    }
    return points
}

/// Redis's geohashCalculateAreasByShapeWGS84: the centre's box at a step
/// from the shape's size (one coarser when a side neighbour does not reach
/// the shape's bounding box), then its neighbours, less those the shape
/// cannot reach. The centre's box first, zeroed neighbours left in place.
private func searchBoxes(_ shape: SearchShape) -> [GeohashBits] {
    let degrees = { (radians: Double) in radians / (Double.pi / 180) }
    let radians = { (degrees: Double) in degrees * (Double.pi / 180) }
    let height = shape.unit * (shape.radius ?? (shape.box?.height ?? 0) / 2)
    let width = shape.unit * (shape.radius ?? (shape.box?.width ?? 0) / 2)
    let latitudeDelta = degrees(height / Geohash.earthRadius)
    let longitudeDeltaTop = degrees(width / Geohash.earthRadius / cos(radians(shape.latitude + latitudeDelta)))
    let longitudeDeltaBottom = degrees(width / Geohash.earthRadius / cos(radians(shape.latitude - latitudeDelta)))
    let southern = shape.latitude < 0
    let minimumLongitude = shape.longitude - (southern ? longitudeDeltaBottom : longitudeDeltaTop)
    let maximumLongitude = shape.longitude + (southern ? longitudeDeltaBottom : longitudeDeltaTop)
    let minimumLatitude = shape.latitude - latitudeDelta
    let maximumLatitude = shape.latitude + latitudeDelta
    var radius: Double
    if let box = shape.box {
        radius = sqrt((box.width / 2) * (box.width / 2) + (box.height / 2) * (box.height / 2))
    } else {
        radius = shape.radius ?? 0
    }
    radius *= shape.unit
    var step = Geohash.step(forRadius: radius, latitude: shape.latitude)
    func boxes(_ step: Int) -> (GeohashBits, [GeohashBits]) {
        let hash = Geohash.encode(longitude: shape.longitude, latitude: shape.latitude, step: step) ?? .zero
        return (hash, Geohash.neighbours(of: hash))
    }
    var (hash, neighbours) = boxes(step)
    let north = Geohash.area(neighbours[0])
    let south = Geohash.area(neighbours[1])
    let east = Geohash.area(neighbours[2])
    let west = Geohash.area(neighbours[3])
    let decrease =
        (north?.latitude.max ?? 0) < maximumLatitude || (south?.latitude.min ?? 0) > minimumLatitude
        || (east?.longitude.max ?? 0) < maximumLongitude || (west?.longitude.min ?? 0) > minimumLongitude
    if step > 1 && decrease {
        step -= 1
        (hash, neighbours) = boxes(step)
    }
    if step >= 2, let area = Geohash.area(hash) {
        // neighbours: north 0, south 1, east 2, west 3, north-east 4,
        // north-west 5, south-east 6, south-west 7.
        if area.latitude.min < minimumLatitude { for side in [1, 7, 6] { neighbours[side] = .zero } }
        if area.latitude.max > maximumLatitude { for side in [0, 4, 5] { neighbours[side] = .zero } }
        if area.longitude.min < minimumLongitude { for side in [3, 7, 5] { neighbours[side] = .zero } }
        if area.longitude.max > maximumLongitude { for side in [2, 6, 4] { neighbours[side] = .zero } }
    }
    return [hash] + neighbours
}
