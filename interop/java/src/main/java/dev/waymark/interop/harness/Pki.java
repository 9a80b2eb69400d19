package dev.waymark.interop.harness;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.MessageDigest;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.Base64;

/**
 * A throw-away certificate authority for the TLS scenarios, with nothing but the JDK: RSA-2048
 * keys, X.509 <b>v3</b> certificates (DER written here, signed SHA256withRSA, checked by the
 * JDK's {@code CertificateFactory} and {@code verify}) and PEM files as Java RocketMQ reads them:
 * {@code CERTIFICATE} chains and unencrypted PKCS#8 {@code PRIVATE KEY}s.
 *
 * <p>The CA has {@code basicConstraints CA:true} and {@code keyCertSign}; every leaf has
 * {@code CA:false}, {@code digitalSignature keyEncipherment}, extended key usage serverAuth and
 * clientAuth (one certificate serves a broker as server and as client), the subject alternative
 * names {@code DNS:localhost} and {@code IP:127.0.0.1}, and key identifiers. Waymark verifies
 * client certificates with webpki, which refuses v1 certificates (docs/security.md); the JDK
 * checks the chain and the key usages, never the host name.
 */
public final class Pki {
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final byte[] SHA256_WITH_RSA = seq(oid("1.2.840.113549.1.1.11"), new byte[] {0x05, 0x00});

    private final Path dir;
    private final KeyPair caKeys;
    private final byte[] caName;
    private final X509Certificate ca;
    private final Path caPem;

    private Pki(Path dir, KeyPair caKeys, byte[] caName, X509Certificate ca, Path caPem) {
        this.dir = dir;
        this.caKeys = caKeys;
        this.caName = caName;
        this.ca = ca;
        this.caPem = caPem;
    }

    /** A new CA ({@code CN=<caName>}) whose files go to {@code dir}. */
    public static Pki create(Path dir, String caCommonName) {
        try {
            Files.createDirectories(dir);
            KeyPair keys = rsa();
            byte[] name = name(caCommonName);
            byte[] extensions = seq(
                extension("2.5.29.19", true, seq(bool(true))),
                extension("2.5.29.15", true, bits(1, 0x06)), // keyCertSign, cRLSign
                extension("2.5.29.14", false, octets(keyId(keys.getPublic()))));
            X509Certificate ca = sign(name, name, keys.getPublic(), extensions, keys.getPrivate(), keys.getPublic());
            Path pem = dir.resolve("ca.pem");
            Files.writeString(pem, pem("CERTIFICATE", ca.getEncoded()));
            return new Pki(dir, keys, name, ca, pem);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The CA certificate's PEM file (a trust file for either side). */
    public Path caPem() {
        return caPem;
    }

    public X509Certificate ca() {
        return ca;
    }

    /** A leaf certificate issued by this CA and its key, written as {@code <name>.pem} and {@code <name>.key}. */
    public Leaf issue(String fileName, String commonName) {
        try {
            KeyPair keys = rsa();
            byte[] extensions = seq(
                extension("2.5.29.19", true, seq()),
                extension("2.5.29.15", true, bits(5, 0xA0)), // digitalSignature, keyEncipherment
                extension("2.5.29.37", false, seq(oid("1.3.6.1.5.5.7.3.1"), oid("1.3.6.1.5.5.7.3.2"))),
                extension("2.5.29.17", false, seq(tagged(0x82, "localhost".getBytes(StandardCharsets.US_ASCII)),
                    tagged(0x87, new byte[] {127, 0, 0, 1}))),
                extension("2.5.29.14", false, octets(keyId(keys.getPublic()))),
                extension("2.5.29.35", false, seq(tagged(0x80, keyId(caKeys.getPublic())))));
            X509Certificate cert = sign(caName, name(commonName), keys.getPublic(), extensions, caKeys.getPrivate(),
                caKeys.getPublic());
            Path certPem = dir.resolve(fileName + ".pem");
            Path keyPem = dir.resolve(fileName + ".key");
            Files.writeString(certPem, pem("CERTIFICATE", cert.getEncoded()));
            // JDK RSA private keys encode as PKCS#8 (PrivateKeyInfo), what RocketMQ's TlsHelper reads.
            Files.writeString(keyPem, pem("PRIVATE KEY", keys.getPrivate().getEncoded()));
            return new Leaf(commonName, cert, certPem, keyPem);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    /** One issued certificate: its common name, the certificate, and its PEM certificate and key files. */
    public record Leaf(String commonName, X509Certificate cert, Path certPem, Path keyPem) {
    }

    private static KeyPair rsa() throws GeneralSecurityException {
        KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
        generator.initialize(2048, RANDOM);
        return generator.generateKeyPair();
    }

    private static X509Certificate sign(byte[] issuer, byte[] subject, PublicKey key, byte[] extensions,
        PrivateKey signer, PublicKey signerPublic) throws GeneralSecurityException, IOException {
        ZonedDateTime now = ZonedDateTime.now(ZoneOffset.UTC);
        byte[] tbs = seq(
            tagged(0xA0, integer(BigInteger.TWO)), // v3
            integer(new BigInteger(63, RANDOM).add(BigInteger.ONE)),
            SHA256_WITH_RSA,
            issuer,
            seq(utcTime(now.minusDays(1)), utcTime(now.plusYears(2))),
            subject,
            key.getEncoded(), // SubjectPublicKeyInfo
            tagged(0xA3, extensions));
        Signature signature = Signature.getInstance("SHA256withRSA");
        signature.initSign(signer);
        signature.update(tbs);
        byte[] der = seq(tbs, SHA256_WITH_RSA, bits(0, signature.sign()));
        X509Certificate cert = (X509Certificate) CertificateFactory.getInstance("X.509")
            .generateCertificate(new ByteArrayInputStream(der));
        cert.verify(signerPublic);
        if (cert.getVersion() != 3) {
            throw new IllegalStateException("not a v3 certificate: " + cert);
        }
        return cert;
    }

    private static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n"
            + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der)
            + "\n-----END " + type + "-----\n";
    }

    /** SHA-1 of the subjectPublicKey bits (RFC 5280 4.2.1.2, method 1). */
    private static byte[] keyId(PublicKey key) throws GeneralSecurityException {
        byte[] spki = key.getEncoded();
        // SubjectPublicKeyInfo ::= SEQUENCE { algorithm, subjectPublicKey BIT STRING }: skip to the bits.
        int[] outer = header(spki, 0);
        int[] algorithm = header(spki, outer[0]);
        int bitsAt = algorithm[0] + algorithm[1];
        int[] bits = header(spki, bitsAt);
        byte[] content = java.util.Arrays.copyOfRange(spki, bits[0] + 1, bits[0] + bits[1]);
        return MessageDigest.getInstance("SHA-1").digest(content);
    }

    /** {content offset, content length} of the DER element at {@code at}. */
    private static int[] header(byte[] der, int at) {
        int first = der[at + 1] & 0xFF;
        if (first < 0x80) {
            return new int[] {at + 2, first};
        }
        int count = first & 0x7F;
        int length = 0;
        for (int i = 0; i < count; i++) {
            length = (length << 8) | (der[at + 2 + i] & 0xFF);
        }
        return new int[] {at + 2 + count, length};
    }

    // DER encoding.

    private static byte[] name(String commonName) {
        // Name ::= SEQUENCE OF RelativeDistinguishedName (SET OF AttributeTypeAndValue): CN only.
        return seq(tagged(0x31, seq(oid("2.5.4.3"), tagged(0x0C, commonName.getBytes(StandardCharsets.UTF_8)))));
    }

    private static byte[] extension(String oid, boolean critical, byte[] value) {
        return critical ? seq(oid(oid), bool(true), octets(value)) : seq(oid(oid), octets(value));
    }

    private static byte[] utcTime(ZonedDateTime time) {
        String text = time.format(DateTimeFormatter.ofPattern("yyMMddHHmmss'Z'"));
        return tagged(0x17, text.getBytes(StandardCharsets.US_ASCII));
    }

    private static byte[] integer(BigInteger value) {
        return tagged(0x02, value.toByteArray());
    }

    private static byte[] bool(boolean value) {
        return new byte[] {0x01, 0x01, (byte) (value ? 0xFF : 0x00)};
    }

    private static byte[] octets(byte[] content) {
        return tagged(0x04, content);
    }

    /** A BIT STRING of one byte with {@code unused} trailing bits. */
    private static byte[] bits(int unused, int oneByte) {
        return tagged(0x03, new byte[] {(byte) unused, (byte) oneByte});
    }

    private static byte[] bits(int unused, byte[] content) {
        byte[] all = new byte[content.length + 1];
        all[0] = (byte) unused;
        System.arraycopy(content, 0, all, 1, content.length);
        return tagged(0x03, all);
    }

    private static byte[] oid(String dotted) {
        String[] parts = dotted.split("\\.");
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(Integer.parseInt(parts[0]) * 40 + Integer.parseInt(parts[1]));
        for (int i = 2; i < parts.length; i++) {
            long value = Long.parseLong(parts[i]);
            int groups = 1;
            for (long v = value >>> 7; v != 0; v >>>= 7) {
                groups++;
            }
            for (int g = groups - 1; g >= 0; g--) {
                int septet = (int) ((value >>> (7 * g)) & 0x7F);
                out.write(g == 0 ? septet : septet | 0x80);
            }
        }
        return tagged(0x06, out.toByteArray());
    }

    private static byte[] seq(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] part : parts) {
            out.writeBytes(part);
        }
        return tagged(0x30, out.toByteArray());
    }

    private static byte[] tagged(int tag, byte[] content) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(tag);
        int length = content.length;
        if (length < 0x80) {
            out.write(length);
        } else if (length < 0x100) {
            out.write(0x81);
            out.write(length);
        } else if (length < 0x10000) {
            out.write(0x82);
            out.write(length >>> 8);
            out.write(length);
        } else {
            out.write(0x83);
            out.write(length >>> 16);
            out.write(length >>> 8);
            out.write(length);
        }
        out.writeBytes(content);
        return out.toByteArray();
    }
}
