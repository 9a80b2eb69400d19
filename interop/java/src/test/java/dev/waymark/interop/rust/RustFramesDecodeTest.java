package dev.waymark.interop.rust;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.waymark.interop.harness.SkipOrFail;
import dev.waymark.interop.vectors.Wire;
import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.stream.Stream;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * Frames encoded by Waymark's rmq-wire ({@code crates/rmq-wire/examples/emit_frames.rs})
 * decoded by the real Java {@code RemotingCommand.decode}, each checked against its
 * {@code .expect} file.
 *
 * <p>The directory comes from {@code -Dwaymark.rust.frames=DIR}. Without it the test is
 * skipped, except under {@code CI=true}, where it fails: CI must exercise it.
 */
class RustFramesDecodeTest {

    @TestFactory
    List<DynamicTest> javaDecodesRustFrames() throws IOException {
        String dirProperty = System.getProperty("waymark.rust.frames", "");
        if (dirProperty.isEmpty()) {
            String message = "-Dwaymark.rust.frames=DIR is not set: run interop/run-java.sh, which writes the "
                + "frames with `cargo run -p rmq-wire --example emit_frames -- DIR`";
            SkipOrFail.now(message);
        }
        Path dir = Path.of(dirProperty);
        List<Path> frames = new ArrayList<>();
        try (Stream<Path> paths = Files.list(dir)) {
            paths.filter(p -> p.getFileName().toString().endsWith(".bin")).sorted().forEach(frames::add);
        }
        assertFalse(frames.isEmpty(), "no .bin frames in " + dir);
        List<DynamicTest> tests = new ArrayList<>();
        for (Path frame : frames) {
            String stem = frame.getFileName().toString().replaceFirst("\\.bin$", "");
            tests.add(DynamicTest.dynamicTest(stem, () -> check(frame, dir.resolve(stem + ".expect"))));
        }
        return tests;
    }

    private static void check(Path framePath, Path expectPath) throws Exception {
        byte[] frame = Files.readAllBytes(framePath);
        Properties expect = new Properties();
        try (Reader reader = Files.newBufferedReader(expectPath, StandardCharsets.ISO_8859_1)) {
            expect.load(reader);
        }
        String name = expect.getProperty("name", framePath.getFileName().toString());

        RemotingCommand direct = Wire.decodeDirect(frame);
        RemotingCommand netty = Wire.decodeNetty(frame);
        assertNotNull(netty, name + ": NettyDecoder rejected the frame (Java would close the connection)");
        for (RemotingCommand cmd : List.of(direct, netty)) {
            assertEquals(expect.getProperty("serializeType"), cmd.getSerializeTypeCurrentRPC().name(), name);
            assertEquals(Integer.parseInt(expect.getProperty("code")), cmd.getCode(), name + " code");
            assertEquals(Integer.parseInt(expect.getProperty("flag")), cmd.getFlag(), name + " flag");
            assertEquals(Integer.parseInt(expect.getProperty("opaque")), cmd.getOpaque(), name + " opaque");
            assertEquals(Integer.parseInt(expect.getProperty("version")), cmd.getVersion(), name + " version");
            assertNotNull(cmd.getLanguage(), name + ": language decoded as null");
            assertEquals(expect.getProperty("language"), cmd.getLanguage().name(), name + " language");
            assertEquals(expect.getProperty("remark"), cmd.getRemark(), name + " remark");
            checkExt(name, expect, cmd.getExtFields());
            byte[] body = cmd.getBody();
            int length = body == null ? 0 : body.length;
            assertEquals(Integer.parseInt(expect.getProperty("body.length")), length, name + " body length");
            assertEquals(expect.getProperty("body.fnv1a32"), String.format("%08x", fnv1a32(body)), name + " body");
            assertTrue(length > 0 || body == null, name + ": Java never decodes an empty body as non-null");
        }
    }

    private static void checkExt(String name, Properties expect, HashMap<String, String> ext) {
        String map = expect.getProperty("ext.map");
        switch (map) {
            case "null" -> assertNull(ext, name + ": extFields must be null");
            case "present" -> assertNotNull(ext, name + ": extFields must be present");
            case "absent" -> assertTrue(ext == null || ext.values().stream().allMatch(v -> v == null),
                name + ": extFields must be null or hold only nulls, got " + ext);
            default -> fail(name + ": bad ext.map " + map);
        }
        Map<String, String> nonNull = new HashMap<>();
        if (ext != null) {
            ext.forEach((k, v) -> {
                if (v != null) {
                    nonNull.put(k, v);
                }
            });
        }
        Map<String, String> expected = new HashMap<>();
        for (String key : expect.stringPropertyNames()) {
            if (key.startsWith("ext.") && !List.of("ext.map", "ext.count", "ext.nulls").contains(key)) {
                expected.put(key.substring(4), expect.getProperty(key));
            }
        }
        assertEquals(Integer.parseInt(expect.getProperty("ext.count")), expected.size(), name + ": .expect is inconsistent");
        assertEquals(expected, nonNull, name + " extFields");
        String nulls = expect.getProperty("ext.nulls", "");
        for (String key : nulls.isEmpty() ? new String[0] : nulls.split(",")) {
            assertTrue(ext == null || ext.get(key) == null, name + ": " + key + " must be missing or null");
        }
    }

    private static int fnv1a32(byte[] bytes) {
        int hash = 0x811c9dc5;
        if (bytes != null) {
            for (byte b : bytes) {
                hash ^= b & 0xFF;
                hash *= 0x01000193;
            }
        }
        return hash;
    }
}
