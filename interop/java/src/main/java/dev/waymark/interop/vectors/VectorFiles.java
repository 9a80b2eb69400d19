package dev.waymark.interop.vectors;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * Renders vectors to the files the Rust tests read.
 *
 * <ul>
 *   <li>{@code crates/rmq-wire/tests/vectors/<name>.hex}: first line
 *       {@code # java <release> <description>}, then {@code #} lines showing the JSON header
 *       (and a short text body) for people, then the whole frame, length prefix included,
 *       as hex, 32 bytes per line.</li>
 *   <li>{@code crates/rmq-protocol/tests/vectors/<name>.json} or {@code .bin}: the body bytes
 *       exactly; {@code <name>.meta}: {@code java <release>} then {@code <Type> <dialect>}.</li>
 * </ul>
 */
public final class VectorFiles {
    public static final String FRAME_DIR = "crates/rmq-wire/tests/vectors";
    public static final String BODY_DIR = "crates/rmq-protocol/tests/vectors";
    /** Controller exchanges: {@code <name>.json} plus {@code <name>.meta} (ControllerVectorTest). */
    public static final String CONTROLLER_DIR = "crates/rmq-controller/tests/vectors";

    private VectorFiles() {
    }

    /** Every file of this release: relative path -> content. */
    public static Map<String, byte[]> render(List<Frame> frames, List<Body> bodies) {
        Map<String, byte[]> files = new LinkedHashMap<>();
        for (Frame frame : frames) {
            put(files, FRAME_DIR + "/" + frame.name() + ".hex", hexFile(frame.description(), Wire.encode(frame.command()))
                .getBytes(StandardCharsets.UTF_8));
        }
        String release = Release.version();
        for (Body body : bodies) {
            put(files, BODY_DIR + "/" + body.name() + "." + body.extension(), body.bytes());
            put(files, BODY_DIR + "/" + body.name() + ".meta",
                ("java " + release + "\n" + body.type() + " " + body.dialect() + "\n").getBytes(StandardCharsets.UTF_8));
        }
        return files;
    }

    private static void put(Map<String, byte[]> files, String path, byte[] content) {
        if (files.put(path, content) != null) {
            throw new IllegalStateException("two vectors named " + path);
        }
    }

    static String hexFile(String description, byte[] frame) {
        StringBuilder out = new StringBuilder();
        out.append("# ").append(description).append('\n');
        int headerInfo = ByteBuffer.wrap(frame, 4, 4).getInt();
        int headerLength = headerInfo & 0xFFFFFF;
        int bodyStart = 8 + headerLength;
        if ((headerInfo >>> 24) == 0) {
            out.append("# header: ").append(printable(frame, 8, headerLength)).append('\n');
        }
        int bodyLength = frame.length - bodyStart;
        if (bodyLength > 0 && bodyLength <= 2048) {
            String text = utf8(frame, bodyStart, bodyLength);
            if (text != null) {
                out.append("# body: ").append(escapeControls(text)).append('\n');
            }
        }
        for (int i = 0; i < frame.length; i++) {
            out.append(String.format("%02x", frame[i] & 0xFF));
            out.append((i % 32 == 31 || i == frame.length - 1) ? '\n' : ' ');
        }
        return out.toString();
    }

    private static String printable(byte[] bytes, int offset, int length) {
        String text = utf8(bytes, offset, length);
        return text == null ? "(not UTF-8)" : escapeControls(text);
    }

    private static String utf8(byte[] bytes, int offset, int length) {
        try {
            return StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT)
                .decode(ByteBuffer.wrap(bytes, offset, length))
                .toString();
        } catch (CharacterCodingException e) {
            return null;
        }
    }

    /** Control characters (and U+2028/9, which some editors treat as line breaks) as {@code <U+XXXX>}. */
    private static String escapeControls(String text) {
        StringBuilder out = new StringBuilder();
        text.codePoints().forEach(cp -> {
            if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || cp == 0x2028 || cp == 0x2029) {
                out.append(String.format("<U+%04X>", cp));
            } else {
                out.appendCodePoint(cp);
            }
        });
        return out.toString();
    }

    /** Writes the files under {@code root}, creating directories. */
    public static void write(Path root, Map<String, byte[]> files) {
        try {
            for (Map.Entry<String, byte[]> file : files.entrySet()) {
                Path path = root.resolve(file.getKey());
                Files.createDirectories(path.getParent());
                Files.write(path, file.getValue());
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Deletes the frame and body vectors an earlier run of this release wrote under
     * {@code root} (recognised by their first line), so renamed or dropped vectors do not
     * linger. Files of other releases and files not written by Java are left alone, and so
     * are the controller vectors, which their own test rewrites.
     */
    public static List<Path> deleteRelease(Path root, String release) {
        List<Path> deleted = new ArrayList<>();
        try {
            Path frameDir = root.resolve(FRAME_DIR);
            if (Files.isDirectory(frameDir)) {
                try (Stream<Path> paths = Files.list(frameDir)) {
                    for (Path path : (Iterable<Path>) paths::iterator) {
                        if (path.toString().endsWith(".hex") && firstLine(path).startsWith("# java " + release + " ")) {
                            Files.delete(path);
                            deleted.add(path);
                        }
                    }
                }
            }
            deleted.addAll(deleteWithMeta(root.resolve(BODY_DIR), release));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return deleted;
    }

    /**
     * Deletes the vectors an earlier run of this release wrote in {@code dir} as
     * {@code <name>.meta} (first line {@code java <release>}) plus {@code <name>.json} or
     * {@code <name>.bin}; other files are left alone.
     */
    public static List<Path> deleteWithMeta(Path dir, String release) {
        List<Path> deleted = new ArrayList<>();
        if (!Files.isDirectory(dir)) {
            return deleted;
        }
        try (Stream<Path> paths = Files.list(dir)) {
            for (Path meta : (Iterable<Path>) paths::iterator) {
                String name = meta.getFileName().toString();
                if (name.endsWith(".meta") && firstLine(meta).equals("java " + release)) {
                    String stem = name.substring(0, name.length() - ".meta".length());
                    for (String ext : new String[] {".json", ".bin"}) {
                        Path data = dir.resolve(stem + ext);
                        if (Files.deleteIfExists(data)) {
                            deleted.add(data);
                        }
                    }
                    Files.delete(meta);
                    deleted.add(meta);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return deleted;
    }

    private static String firstLine(Path path) throws IOException {
        try (Stream<String> lines = Files.lines(path, StandardCharsets.UTF_8)) {
            return lines.findFirst().orElse("");
        } catch (UncheckedIOException e) {
            return "";
        }
    }
}
