package dev.waymark.interop.vectors;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * Generates the wire and body vectors from the real Java classes of the profile's release.
 *
 * <ul>
 *   <li>{@code -Dwaymark.vectors.write=true}: (re)writes this release's vectors into the
 *       repository ({@code crates/rmq-wire/tests/vectors}, {@code crates/rmq-protocol/tests/vectors}),
 *       deleting the ones an earlier run of the same release wrote.</li>
 *   <li>{@code -Dwaymark.vectors.dir=DIR}: writes them under {@code DIR} with the same
 *       relative paths (CI diffs that against the committed files).</li>
 *   <li>neither: generates in memory only.</li>
 * </ul>
 * The other tests check that generation is deterministic and that Java decodes what it wrote.
 */
class VectorGeneratorTest {

    private static Map<String, byte[]> generate() {
        return VectorFiles.render(FrameCatalog.build(), Bodies.all(Release.tag()));
    }

    @Test
    void generationIsDeterministic() {
        Map<String, byte[]> first = generate();
        Map<String, byte[]> second = generate();
        assertEquals(first.keySet(), second.keySet());
        first.forEach((path, bytes) -> assertArrayEquals(bytes, second.get(path), path + " differs between runs"));
        assertTrue(first.size() > 100, "expected a full catalog, got " + first.size() + " files");
    }

    @Test
    void writeVectors() {
        String dir = System.getProperty("waymark.vectors.dir", "");
        boolean intoRepo = Boolean.getBoolean("waymark.vectors.write");
        Assumptions.assumeTrue(intoRepo || !dir.isEmpty(),
            "set -Dwaymark.vectors.write=true or -Dwaymark.vectors.dir=DIR to write vector files");
        Map<String, byte[]> files = generate();
        Path root;
        if (intoRepo) {
            root = Path.of(System.getProperty("waymark.repo.root")).toAbsolutePath().normalize();
            VectorFiles.deleteRelease(root, Release.version());
        } else {
            root = Path.of(dir).toAbsolutePath();
        }
        VectorFiles.write(root, files);
        System.out.printf("wrote %d vector files of RocketMQ %s under %s%n", files.size(), Release.version(), root);
    }

    /** Both decoders Java has accept every frame, and give back what was encoded. */
    @Test
    void javaDecodesEveryFrameItWrote() throws Exception {
        for (Frame frame : FrameCatalog.build()) {
            byte[] bytes = Wire.encode(frame.command());
            RemotingCommand viaNetty = Wire.decodeNetty(bytes);
            assertNotNull(viaNetty, frame.name() + ": NettyDecoder rejected it");
            RemotingCommand direct = Wire.decodeDirect(bytes);
            for (RemotingCommand decoded : List.of(viaNetty, direct)) {
                RemotingCommand sent = frame.command();
                String name = frame.name();
                assertEquals(sent.getCode() & (isBinary(bytes) ? 0xFFFF : -1),
                    decoded.getCode() & (isBinary(bytes) ? 0xFFFF : -1), name + " code");
                assertEquals(sent.getFlag(), decoded.getFlag(), name + " flag");
                assertEquals(sent.getOpaque(), decoded.getOpaque(), name + " opaque");
                assertEquals(sent.getVersion(), decoded.getVersion(), name + " version");
                assertEquals(sent.getLanguage(), decoded.getLanguage(), name + " language");
                assertEquals(sent.getSerializeTypeCurrentRPC(), decoded.getSerializeTypeCurrentRPC(), name);
                if (sent.getBody() == null) {
                    assertEquals(null, decoded.getBody(), name + " body");
                } else {
                    assertArrayEquals(sent.getBody(), decoded.getBody(), name + " body");
                }
            }
        }
    }

    /**
     * The vectors use the Netty encoder's path ({@code fastEncodeHeader}); check that the
     * older {@code encode()} gives the same bytes, so either describes Java.
     */
    @Test
    void nettyEncoderAndEncodeAgree() {
        List<String> differ = new ArrayList<>();
        for (Frame frame : FrameCatalog.build()) {
            byte[] netty = Wire.encode(frame.command());
            ByteBuffer buffer = frame.command().encode();
            byte[] plain = new byte[buffer.remaining()];
            buffer.get(plain);
            if (!java.util.Arrays.equals(netty, plain)) {
                differ.add(frame.name());
            }
        }
        if (!differ.isEmpty()) {
            fail("fastEncodeHeader and encode() differ for " + differ);
        }
    }

    private static boolean isBinary(byte[] frame) {
        return frame[4] == 1;
    }
}
