// Geohash.swift: the geohash arithmetic of Redis 7.0's GEO commands
// (geohash.c and geohash_helper.c), in Redis's order of operations so that
// positions, distances and the areas a search reads come out bit for bit
// as redis-server's: a position is a 52-bit score, 26 bits of latitude on
// the even bits and 26 of longitude on the odd ones, over Web Mercator's
// latitudes (±85.05112878); a search covers its shape with a geohash box
// and its eight neighbours at a precision chosen from the radius.
import Glibc

/// Redis's bounds: the latitudes Web Mercator can show.
let geoLongitudes = -180.0...180.0
let geoLatitudes = -85.05112878...85.05112878

/// A geohash of `step` bits per coordinate (`bits` holds 2 x step).
struct GeohashBits: Equatable {
    var bits: UInt64
    var step: Int

    /// Redis's zeroed hash: a neighbour left out of a search.
    static let zero = GeohashBits(bits: 0, step: 0)
}

/// The rectangle a geohash covers.
struct GeohashArea {
    var longitude: (min: Double, max: Double)
    var latitude: (min: Double, max: Double)
}

enum Geohash {
    /// Earth's quadratic mean radius for WGS-84, in metres (Redis's).
    static let earthRadius = 6372797.560856
    /// The Mercator projection's edge, in metres: the radius steps start there.
    private static let mercatorMax = 20037726.37
    private static let degreesToRadians = Double.pi / 180

    /// Encodes a position at `step` bits a coordinate over the given
    /// ranges; nil outside them (Redis's geohashEncode returning 0).
    static func encode(
        longitude: Double, latitude: Double, step: Int,
        longitudeRange: ClosedRange<Double> = geoLongitudes, latitudeRange: ClosedRange<Double> = geoLatitudes
    ) -> GeohashBits? {
        guard geoLongitudes.contains(longitude), geoLatitudes.contains(latitude),
            longitudeRange.contains(longitude), latitudeRange.contains(latitude)
        else { return nil }
        let scale = Double(UInt64(1) << step)
        let latitudeOffset =
            (latitude - latitudeRange.lowerBound) / (latitudeRange.upperBound - latitudeRange.lowerBound)
        let longitudeOffset =
            (longitude - longitudeRange.lowerBound) / (longitudeRange.upperBound - longitudeRange.lowerBound)
        // C's conversion to a 32-bit unsigned integer: truncation.
        let bits =
            spreadBits(UInt32(truncatingIfNeeded: UInt64(latitudeOffset * scale)))
            | spreadBits(UInt32(truncatingIfNeeded: UInt64(longitudeOffset * scale))) << 1
        return GeohashBits(bits: bits, step: step)
    }

    /// The area `hash` covers, over Redis's ranges; nil for the zero hash.
    static func area(
        _ hash: GeohashBits, longitudeRange: ClosedRange<Double> = geoLongitudes,
        latitudeRange: ClosedRange<Double> = geoLatitudes
    ) -> GeohashArea? {
        guard hash != .zero else { return nil }
        // 32-bit cell numbers, whose + 1 wraps as in C (only a score no
        // position makes holds a cell number that large).
        let latitudeCell = gatherBits(hash.bits)
        let longitudeCell = gatherBits(hash.bits >> 1)
        let (latitudeBits, nextLatitude) = (Double(latitudeCell), Double(latitudeCell &+ 1))
        let (longitudeBits, nextLongitude) = (Double(longitudeCell), Double(longitudeCell &+ 1))
        let cells = Double(UInt64(1) << hash.step)
        let latitudeScale = latitudeRange.upperBound - latitudeRange.lowerBound
        let longitudeScale = longitudeRange.upperBound - longitudeRange.lowerBound
        return GeohashArea(
            longitude: (
                longitudeRange.lowerBound + (longitudeBits * 1.0 / cells) * longitudeScale,
                longitudeRange.lowerBound + (nextLongitude * 1.0 / cells) * longitudeScale
            ),
            latitude: (
                latitudeRange.lowerBound + (latitudeBits * 1.0 / cells) * latitudeScale,
                latitudeRange.lowerBound + (nextLatitude * 1.0 / cells) * latitudeScale
            ))
    }

    /// The position a sorted-set score stands for: the centre of its
    /// 52-bit cell, clamped to Redis's bounds.
    static func position(of score: Double) -> (longitude: Double, latitude: Double) {
        let area = area(GeohashBits(bits: cUInt64(score), step: 26))!
        let longitude = min(max((area.longitude.min + area.longitude.max) / 2, geoLongitudes.lowerBound), 180)
        let latitude = min(
            max((area.latitude.min + area.latitude.max) / 2, geoLatitudes.lowerBound), geoLatitudes.upperBound)
        return (longitude, latitude)
    }

    /// C's `(uint64_t)` of a double as x86-64 computes it (a score is any
    /// double a client gave ZADD): truncation in range, the signed
    /// conversion below zero, 2^63 for NaN and what it cannot hold.
    static func cUInt64(_ value: Double) -> UInt64 {
        if value >= 0x1p63 {
            let high = value - 0x1p63
            return (high < 0x1p63 ? UInt64(high) : 1 << 63) ^ (1 << 63)
        }
        guard value > -0x1p63 else { return 1 << 63 }  // NaN fails the comparison too
        return UInt64(bitPattern: Int64(value))
    }

    /// The hash's eight neighbours, moved across a coordinate's ends as
    /// Redis moves them (they wrap).
    static func neighbours(of hash: GeohashBits) -> [GeohashBits] {
        // Redis's order: north, south, east, west, north-east, north-west,
        // south-east, south-west.
        [(0, 1), (0, -1), (1, 0), (-1, 0), (1, 1), (-1, 1), (1, -1), (-1, -1)].map { x, y in
            move(move(hash, by: x, on: longitudeBits), by: y, on: latitudeBits)
        }
    }

    /// Longitude's bits (the odd ones) and latitude's (the even ones).
    private static let longitudeBits: UInt64 = 0xaaaa_aaaa_aaaa_aaaa
    private static let latitudeBits: UInt64 = 0x5555_5555_5555_5555

    /// Moves by `delta` cells along the coordinate on `mask`'s bits: the
    /// other coordinate's bits are filled with ones so that the carry (or
    /// borrow) runs through, then cleared, as Redis's geohash_move_x/_y do.
    private static func move(_ hash: GeohashBits, by delta: Int, on mask: UInt64) -> GeohashBits {
        guard delta != 0 else { return hash }
        var moving = hash.bits & mask
        let filler = ~mask >> (64 - hash.step * 2)
        moving = delta > 0 ? moving &+ (filler &+ 1) : (moving | filler) &- (filler &+ 1)
        moving &= mask >> (64 - hash.step * 2)
        return GeohashBits(bits: moving | hash.bits & ~mask, step: hash.step)
    }

    /// The bits of a step from a search's radius (metres) at `latitude`.
    static func step(forRadius radius: Double, latitude: Double) -> Int {
        if radius == 0 { return 26 }
        var range = radius
        var step = 1
        while range < mercatorMax {
            range *= 2
            step += 1
        }
        step -= 2
        // Wider towards the poles.
        if latitude > 66 || latitude < -66 {
            step -= 1
            if latitude > 80 || latitude < -80 { step -= 1 }
        }
        return min(max(step, 1), 26)
    }

    /// Distance in metres along the meridian.
    static func latitudeDistance(_ latitude1: Double, _ latitude2: Double) -> Double {
        earthRadius * abs(latitude2 * degreesToRadians - latitude1 * degreesToRadians)
    }

    /// The haversine distance in metres, as Redis computes it.
    static func distance(_ longitude1: Double, _ latitude1: Double, _ longitude2: Double, _ latitude2: Double)
        -> Double
    {
        let v = sin((longitude2 * degreesToRadians - longitude1 * degreesToRadians) / 2)
        if v == 0 { return latitudeDistance(latitude1, latitude2) }
        let latitude1 = latitude1 * degreesToRadians
        let latitude2 = latitude2 * degreesToRadians
        let u = sin((latitude2 - latitude1) / 2)
        let a = u * u + cos(latitude1) * cos(latitude2) * v * v
        return 2.0 * earthRadius * asin(sqrt(a))
    }

    /// The 32 bits of `value` on the even bits of the result.
    static func spreadBits(_ value: UInt32) -> UInt64 {
        var bits = UInt64(value)
        bits = (bits | bits << 16) & 0x0000_FFFF_0000_FFFF
        bits = (bits | bits << 8) & 0x00FF_00FF_00FF_00FF
        bits = (bits | bits << 4) & 0x0F0F_0F0F_0F0F_0F0F
        bits = (bits | bits << 2) & 0x3333_3333_3333_3333
        bits = (bits | bits << 1) & 0x5555_5555_5555_5555
        return bits
    }

    /// The even bits of `value`, packed into 32.
    static func gatherBits(_ value: UInt64) -> UInt32 {
        var bits = value & 0x5555_5555_5555_5555
        bits = (bits | bits >> 1) & 0x3333_3333_3333_3333
        bits = (bits | bits >> 2) & 0x0F0F_0F0F_0F0F_0F0F
        bits = (bits | bits >> 4) & 0x00FF_00FF_00FF_00FF
        bits = (bits | bits >> 8) & 0x0000_FFFF_0000_FFFF
        bits = (bits | bits >> 16) & 0x0000_0000_FFFF_FFFF
        return UInt32(truncatingIfNeeded: bits)
    }
}
