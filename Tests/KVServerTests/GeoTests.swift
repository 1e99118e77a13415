// GeoTests.swift: what the golden replies (Redis 7.0.15's bytes for the
// GEO commands) and tools/geo-differential.py (thousands of seeded
// searches against a real redis-server) do not pin down on their own:
// distances round as Redis's llrint rounds them, not as printf does; a
// score no position makes decodes through C's conversion, not a trap.
import Testing

@testable import KVServer

@Suite struct GeoTests {
    @Test func distancesRoundTheScaledValueToEvenAsRedisDoesNotTheDecimalAsPrintfDoes() {
        // 0.00025 is a little above its decimal (printf: 0.0003), but times
        // 10,000 it is 2.5 exactly, which llrint rounds to 2.
        #expect(fixedPoint(0.00025) == "0.0002")
        #expect(fixedPoint(0.00035) == "0.0004")  // printf: 0.0003
        #expect(fixedPoint(0) == "0.0000")
        #expect(fixedPoint(0.00001) == "0.0000")
        #expect(fixedPoint(166274.15156960033) == "166274.1516")
        #expect(fixedPoint(12.3) == "12.3000")
    }

    /// A coordinate as GEOPOS writes it.
    private func text(_ value: Double) -> String { String(decoding: humanReadable(Float80(value)), as: UTF8.self) }

    @Test func scoresNoPositionMakesConvertAsCOnX86Does() {
        #expect(Geohash.cUInt64(3_479_099_956_230_698) == 3_479_099_956_230_698)
        #expect(Geohash.cUInt64(-1.5) == UInt64.max)  // truncated to -1, as a signed conversion
        #expect(Geohash.cUInt64(.nan) == UInt64(1) << 63)
        #expect(Geohash.cUInt64(-.infinity) == UInt64(1) << 63)
        #expect(Geohash.cUInt64(.infinity) == 0)
        #expect(Geohash.cUInt64(1e300) == 0)
        #expect(Geohash.cUInt64(0x1p63 + 4096) == UInt64(1) << 63 | 4096)
        // What redis-server 7.0.15 answers GEOPOS for members ZADDed with
        // -1 and 1e300 (the golden case "geo readers").
        let negative = Geohash.position(of: -1)
        #expect(text(negative.longitude) == "180" && text(negative.latitude) == "85.0511287799999991")
        let huge = Geohash.position(of: 1e300)
        #expect(text(huge.longitude) == "-179.99999731779098511" && text(huge.latitude) == "-85.05112751263942528")
    }

    @Test func aScoreDecodesToTheCentreOfItsCellAsRedisWritesIt() {
        // Palermo as GEOADD stores it and GEOPOS answers it (redis-server's bytes).
        let score = Geohash.encode(longitude: 13.361389, latitude: 38.115556, step: 26)!.bits
        #expect(score == 3_479_099_956_230_698)
        let (longitude, latitude) = Geohash.position(of: Double(score))
        #expect(text(longitude) == "13.36138933897018433" && text(latitude) == "38.11555639549629859")
        #expect(Geohash.encode(longitude: 180.1, latitude: 0, step: 26) == nil)
        #expect(Geohash.encode(longitude: 0, latitude: 85.1, step: 26) == nil)
    }

    @Test func theSearchStepFollowsTheRadiusAndNarrowsTowardsThePoles() {
        #expect(Geohash.step(forRadius: 0, latitude: 0) == 26)
        // 200 km doubles 7 times to pass Mercator's 20,037 km: 1 + 7 - 2.
        #expect(Geohash.step(forRadius: 200_000, latitude: 37) == 6)
        #expect(Geohash.step(forRadius: 200_000, latitude: 70) == 5)
        #expect(Geohash.step(forRadius: 200_000, latitude: -85) == 4)
        #expect(Geohash.step(forRadius: 1e9, latitude: 0) == 1)
        #expect(Geohash.step(forRadius: .infinity, latitude: 0) == 1)
        #expect(Geohash.step(forRadius: 0.001, latitude: 0) == 26)
    }

    @Test func neighboursWrapAroundTheAntimeridianAsRedisMovesThem() {
        // The cell at the east edge, step 2: east of it is the west edge.
        let east = Geohash.encode(longitude: 179, latitude: 0, step: 2)!
        let west = Geohash.encode(longitude: -179, latitude: 0, step: 2)!
        let neighbours = Geohash.neighbours(of: east)
        #expect(neighbours[2] == west)  // Redis's order: north, south, east, west, ...
        #expect(Geohash.neighbours(of: west)[3] == east)
        let north = Geohash.encode(longitude: 179, latitude: 50, step: 2)!
        #expect(neighbours[0] == north)
    }
}
