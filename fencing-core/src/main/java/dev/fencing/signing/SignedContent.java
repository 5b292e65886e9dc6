package dev.fencing.signing;

import dev.fencing.token.FencingToken;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The bytes a token signature covers: a version tag, the scheme, the key id, the resource, the value and the holder.
 * Every text field is length-prefixed (4 bytes, big-endian, then UTF-8), the value is 8 bytes big-endian, so no two
 * different tokens have the same content ({@code "a:b"+"c"} and {@code "a"+"b:c"} differ in their lengths).
 */
final class SignedContent {

    private static final byte[] TAG = "dev.fencing.token-signature/1".getBytes(StandardCharsets.US_ASCII);

    private SignedContent() {
    }

    static byte[] of(SignatureScheme scheme, String keyId, FencingToken token) {
        byte[] schemeName = scheme.configName().getBytes(StandardCharsets.US_ASCII);
        byte[] key = keyId.getBytes(StandardCharsets.UTF_8);
        byte[] resource = token.resource().getBytes(StandardCharsets.UTF_8);
        byte[] holder = token.holder().getBytes(StandardCharsets.UTF_8);
        ByteBuffer out = ByteBuffer.allocate(5 * 4 + TAG.length + schemeName.length + key.length + resource.length
                + 8 + holder.length);
        put(out, TAG);
        put(out, schemeName);
        put(out, key);
        put(out, resource);
        out.putLong(token.value());
        put(out, holder);
        return out.array();
    }

    private static void put(ByteBuffer out, byte[] field) {
        out.putInt(field.length).put(field);
    }
}
