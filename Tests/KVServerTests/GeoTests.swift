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

    @Test func scoresNoPositionMakesConvertAsCOnX86Does() {
        #expect(Geohash.cUInt64(3_479_099_956_230_698) == 3_479_099_956_230_698)
        #expect(Geohash.cUInt64(-1.5) == UInt64.max)  // truncated to -1, as a signed conversion
        #expect(Geohash.cUInt64(.nan) == UInt64(1) << 63)
        #expect(Geohash.cUInt64(-.infinity) == UInt64(1) << 63)
        #expect(Geohash.cUInt64(.infinity) == 0)
        #expect(Geohash.cUInt64(1e300) == 0)
        #expect(Geohash.cUInt64(0x1p63 + 4096) == UInt64(1) << 63 | 4096)
        let (longitude, latitude) = Geohash.position(of: .nan)
        #expect(geoLongitudes.contains(longitude) && geoLatitudes.contains(latitude))
    }

    @Test func aPositionSurvivesItsScoreToWithinItsCell() {
        for (longitude, latitude) in [(13.361389, 38.115556), (-179.9999, -85.05), (180.0, 85.05112878), (0.0, 0.0)] {
            let score = Geohash.encode(longitude: longitude, latitude: latitude, step: 26)!.bits
            let decoded = Geohash.position(of: Double(score))
            // A cell at step 26: 360 / 2^26 degrees of longitude, 170 / 2^26 of latitude.
            #expect(abs(decoded.longitude - longitude) <= 360.0 / Double(1 << 26))
            #expect(abs(decoded.latitude - latitude) <= 171.0 / Double(1 << 26))
        }
        #expect(Geohash.encode(longitude: 180.1, latitude: 0, step: 26) == nil)
        #expect(Geohash.encode(longitude: 0, latitude: 85.1, step: 26) == nil)
    }
}
