import FuzzSupport
import Foundation
import SyncWire

/// The executable's entry point (SwiftPM links `main` to this name): libFuzzer's driver.
@_cdecl("fuzz_json_main")
public func main(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    FuzzDriver.run(argc, argv, fuzz)
}

/// libFuzzer's entry point for request bodies: the server's body decoder
/// (`JSONParser.parseObject`) on the input bytes, and when the input is JSON, the round trip
/// through the writer.
///
/// Properties checked on every input:
/// - the parser returns a value or throws a `JSONError` with an offset inside the input (or at
///   its end); it never crashes, hangs or throws anything else;
/// - `parse` and `parseObject` agree: an object for one is the same object for the other;
/// - text the writer produced is accepted by the parser and reads back equal, and writing that
///   again gives the same bytes (the writer's output is canonical);
/// - the writer refuses only what the parser would refuse (never for a parsed value).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = FuzzInput.bytes(data, size)
    let raw = UnsafeRawBufferPointer(input)

    let value: JSONValue
    do {
        value = try JSONParser.parse(raw)
    } catch let error as JSONError {
        checkOffset(error, size: size)
        // The body decoder refuses what the value parser refuses, at the same place.
        do {
            _ = try JSONParser.parseObject(raw)
            invariant(false, "parseObject accepted a text parse refused (\(error))")
        } catch let objectError as JSONError {
            checkOffset(objectError, size: size)
        } catch {
            invariant(false, "parseObject threw a non-JSONError: \(error)")
        }
        return 0
    } catch {
        invariant(false, "parse threw a non-JSONError: \(error)")
        return 0
    }

    // The server's body decoder: an object exactly when the value is one.
    do {
        let object = try JSONParser.parseObject(raw)
        invariant(value == .object(object), "parseObject and parse disagree")
    } catch let error as JSONError {
        invariant(value.objectValue == nil, "parseObject refused an object: \(error)")
        invariant(error.reason == .notAnObject, "parseObject refused valid JSON for \(error)")
    } catch {
        invariant(false, "parseObject threw a non-JSONError: \(error)")
    }

    roundTrip(value)
    if let object = value.objectValue { roundTrip(object) }
    return 0
}

/// The offset of a parse error is a position in the input or its end.
private func checkOffset(_ error: JSONError, size: Int) {
    guard let offset = error.offset else { return invariant(false, "a parse error without an offset: \(error)") }
    invariant((0...size).contains(offset), "offset \(offset) outside an input of \(size) bytes (\(error))")
}

/// Writes a parsed value, reads it back, and writes it again.
private func roundTrip(_ value: JSONValue) {
    let written: Data
    do {
        written = try JSONWriter.data(value)
    } catch {
        return invariant(false, "the writer refused a parsed value: \(error)")
    }
    let again: JSONValue
    do {
        again = try JSONParser.parse(written)
    } catch {
        return invariant(false, "the parser refused the writer's text \(String(decoding: written, as: UTF8.self).debugDescription): \(error)")
    }
    invariant(again == value, "the writer's text reads back different: \(String(decoding: written, as: UTF8.self).debugDescription)")
    invariant((try? JSONWriter.data(again)) == written, "writing the value read back gives other bytes")
    invariant((try? JSONWriter.string(value)) == String(decoding: written, as: UTF8.self), "string(_:) and data(_:) differ")
}

/// The same for an object, through the object entry points the server and client use.
private func roundTrip(_ object: JSONObject) {
    do {
        let written = try JSONWriter.data(object)
        let back = try JSONParser.parseObject(written)
        invariant(back == object, "an object reads back different")
        let asValue = try JSONWriter.data(JSONValue.object(object))
        invariant(written == asValue, "object and value writers differ")
    } catch {
        return invariant(false, "an object round trip failed: \(error)")
    }
    // A page nests the object one level deeper: the writer may refuse it only for depth.
    do {
        let page = try JSONWriter.data([object, object])
        let back = try JSONParser.parseObjects(page)
        invariant(back == [object, object], "a page reads back different")
    } catch let error as JSONError where error.reason == .tooDeep {
        invariant(nestingDepth(.object(object)) == JSONParser.maximumDepth, "a page refused as too deep: \(error)")
    } catch {
        invariant(false, "an object round trip failed: \(error)")
    }
}

/// The number of nested arrays and objects of a value (0 for a scalar).
private func nestingDepth(_ value: JSONValue) -> Int {
    switch value {
    case .array(let elements): return 1 + (elements.map(nestingDepth).max() ?? 0)
    case .object(let members): return 1 + (members.values.map(nestingDepth).max() ?? 0)
    default: return 0
    }
}
