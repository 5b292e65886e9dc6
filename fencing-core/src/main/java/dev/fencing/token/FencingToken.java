package dev.fencing.token;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * A fencing token: the resource it was issued for, its value (a positive long, strictly larger than any earlier
 * token of that resource) and its holder (an opaque id of the acquisition that produced it), optionally signed by the
 * issuer ({@link TokenSignature}). Immutable; equal when all four are equal (equal tokens have equal text forms).
 *
 * <p>Text form, for headers and logs: {@code resource#value@holder}, for example {@code accounts:42#34@client-7}.
 * Resource and holder are percent-encoded (UTF-8, upper-case hex) outside {@code A-Z a-z 0-9 - . _ ~ : /};
 * {@link #parse(CharSequence)} accepts exactly the text {@link #toText()} produces and nothing else. A signed token
 * appends {@code !} and its signature's text: {@code accounts:42#34@client-7!k1.<Base64url>} ({@code !} never occurs
 * unescaped in a holder, so the split is unambiguous).
 *
 * <p>Resource and holder are at most {@link #MAX_PART_LENGTH} chars, without control characters and without unpaired
 * UTF-16 surrogates (a lone surrogate has no UTF-8 form, so it could not survive the text form).
 *
 * @param resource the effective resource (lock name, possibly narrowed by a key), not blank
 * @param value    the token value, greater than zero
 * @param holder    the opaque id of the acquisition, not empty
 * @param signature the issuer's signature over key id, resource, value and holder, or {@code null} when unsigned
 */
public record FencingToken(String resource, long value, String holder, TokenSignature signature) {

    /** Longest resource name or holder id, in chars. */
    public static final int MAX_PART_LENGTH = 256;

    /**
     * Longest text {@link #parse(CharSequence)} looks at: two fully escaped parts, the value, two separators and an
     * optional signature part ({@code !} and {@link TokenSignature#MAX_TEXT_LENGTH}).
     */
    public static final int MAX_TEXT_LENGTH = 2 * MAX_PART_LENGTH * 9 + 19 + 2 + 1 + TokenSignature.MAX_TEXT_LENGTH;

    /** An unsigned token. */
    public FencingToken(String resource, long value, String holder) {
        this(resource, value, holder, null);
    }

    public FencingToken {
        checkPart("resource", resource);
        checkPart("holder", holder);
        if (resource.isBlank()) {
            throw new IllegalArgumentException("Fencing token resource must not be blank");
        }
        if (value <= 0) {
            throw new IllegalArgumentException(
                    "Fencing token value must be positive, was " + value + " for resource '" + resource + "'");
        }
    }

    /**
     * The compact text form {@code resource#value@holder}, followed by {@code !keyId.signature} when signed;
     * {@link #parse(CharSequence)} reverses it exactly.
     */
    public String toText() {
        StringBuilder out = new StringBuilder(resource.length() + holder.length() + 22);
        encode(resource, out);
        out.append('#').append(value).append('@');
        encode(holder, out);
        if (signature != null) {
            out.append(SIGNATURE_SEPARATOR).append(signature.toText());
        }
        return out.toString();
    }

    /** Whether the token carries a signature (not whether it is valid: that is a verifier's call). */
    public boolean isSigned() {
        return signature != null;
    }

    /** This token carrying {@code signature} instead of its own ({@code null}: unsigned). */
    public FencingToken withSignature(TokenSignature signature) {
        return new FencingToken(resource, value, holder, signature);
    }

    /** This token without its signature: what a signature covers, and what the rule compares. */
    public FencingToken unsigned() {
        return signature == null ? this : new FencingToken(resource, value, holder, null);
    }

    /**
     * The text form for logs and messages: a signature is shown by its key id only ({@code !keyId.…}), never
     * whole, because a valid signed token is a credential until a larger one is accepted. Use {@link #toText()} to
     * send a token.
     */
    @Override
    public String toString() {
        if (signature == null) {
            return toText();
        }
        return unsigned().toText() + SIGNATURE_SEPARATOR + signature.keyId() + ".\u2026";
    }

    /**
     * Parses the text form strictly.
     *
     * @throws TokenFormatException naming the offending text and position when it is not exactly a token's text
     *                              form (also for non-canonical escapes, a value of zero, leading zeros, overflow)
     */
    public static FencingToken parse(CharSequence text) {
        if (text == null) {
            throw new TokenFormatException("Fencing token text is null");
        }
        if (text.length() > MAX_TEXT_LENGTH) {
            throw new TokenFormatException("Fencing token text is " + text.length()
                    + " chars long, longer than the " + MAX_TEXT_LENGTH + " allowed");
        }
        String s = text.toString();
        int hash = s.indexOf('#');
        if (hash < 0) {
            throw malformed(s, "no '#' between resource and value");
        }
        int at = s.indexOf('@', hash + 1);
        if (at < 0) {
            throw malformed(s, "no '@' between value and holder");
        }
        int bang = s.indexOf(SIGNATURE_SEPARATOR, at + 1);
        int holderEnd = bang < 0 ? s.length() : bang;
        String resource = decode(s, 0, hash, "resource");
        long value = parseValue(s, hash + 1, at);
        String holder = decode(s, at + 1, holderEnd, "holder");
        TokenSignature signature = null;
        if (bang >= 0) {
            try {
                signature = TokenSignature.parse(s.substring(bang + 1));
            } catch (TokenFormatException e) {
                // the signature is left out of the message: it is no secret, but it is no use to a reader either
                throw new TokenFormatException("Malformed fencing token '" + shorten(s.substring(0, bang))
                        + "!...': " + e.getMessage(), e);
            }
        }
        try {
            return new FencingToken(resource, value, holder, signature);
        } catch (IllegalArgumentException e) {
            throw new TokenFormatException("Malformed fencing token '" + shorten(s) + "': " + e.getMessage(), e);
        }
    }

    private static void checkPart(String what, String part) {
        String unfit = unfit(what, part);
        if (unfit != null) {
            throw new IllegalArgumentException(unfit);
        }
    }

    /**
     * Why {@code part} cannot be the resource or the holder of a token ({@code what} names which, in the reason), or
     * {@code null} when it can: empty, longer than {@link #MAX_PART_LENGTH}, or with a control character or an
     * unpaired UTF-16 surrogate (the reason gives its index).
     */
    public static String unfit(String what, String part) {
        if (part == null || part.isEmpty()) {
            return "Fencing token " + what + " must not be empty";
        }
        if (part.length() > MAX_PART_LENGTH) {
            return "Fencing token " + what + " is " + part.length() + " chars long, longer than the "
                    + MAX_PART_LENGTH + " allowed";
        }
        for (int i = 0; i < part.length(); i++) {
            char c = part.charAt(i);
            if (Character.isISOControl(c)) {
                return "Fencing token " + what + " contains a control character at index " + i;
            }
            if (Character.isHighSurrogate(c) && i + 1 < part.length() && Character.isLowSurrogate(part.charAt(i + 1))) {
                i++; // a proper pair: one supplementary character
            } else if (Character.isSurrogate(c)) {
                // would be encoded as '?', so two tokens would share one text and some texts would not parse back
                return "Fencing token " + what + " contains an unpaired UTF-16 surrogate " + escaped(c) + " at index "
                        + i;
            }
        }
        return null;
    }

    private static boolean isSafe(int c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                || c == '-' || c == '.' || c == '_' || c == '~' || c == ':' || c == '/';
    }

    private static final char[] HEX = "0123456789ABCDEF".toCharArray();

    private static void encode(String part, StringBuilder out) {
        for (int i = 0; i < part.length(); i++) {
            char c = part.charAt(i);
            if (isSafe(c)) {
                out.append(c);
                continue;
            }
            int end = Character.isHighSurrogate(c) && i + 1 < part.length() ? i + 2 : i + 1;
            for (byte b : part.substring(i, end).getBytes(StandardCharsets.UTF_8)) {
                out.append('%').append(HEX[(b >> 4) & 0xF]).append(HEX[b & 0xF]);
            }
            i = end - 1;
        }
    }

    private static String decode(String s, int from, int to, String what) {
        if (from == to) {
            throw malformed(s, "empty " + what);
        }
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(to - from);
        for (int i = from; i < to; i++) {
            char c = s.charAt(i);
            if (c == '%') {
                if (i + 2 >= to) {
                    throw malformed(s, "truncated escape in " + what + " at index " + i);
                }
                int hi = hexDigit(s.charAt(i + 1));
                int lo = hexDigit(s.charAt(i + 2));
                if (hi < 0 || lo < 0) {
                    throw malformed(s, "invalid escape '" + s.substring(i, i + 3) + "' in " + what + " at index " + i
                            + " (two upper-case hex digits expected)");
                }
                int b = (hi << 4) | lo;
                if (isSafe(b)) {
                    throw malformed(s, "needless escape '" + s.substring(i, i + 3) + "' in " + what + " at index " + i);
                }
                bytes.write(b);
                i += 2;
            } else if (isSafe(c)) {
                bytes.write(c);
            } else {
                throw malformed(s, "character '" + printable(c) + "' at index " + i
                        + " must be percent-encoded in " + what);
            }
        }
        try {
            return StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes.toByteArray()))
                    .toString();
        } catch (CharacterCodingException e) {
            throw new TokenFormatException("Malformed fencing token '" + shorten(s) + "': " + what
                    + " is not valid UTF-8", e);
        }
    }

    private static long parseValue(String s, int from, int to) {
        if (from == to) {
            throw malformed(s, "empty value");
        }
        if (s.charAt(from) == '0') {
            throw malformed(s, "value must be a positive decimal without leading zeros");
        }
        long value = 0;
        for (int i = from; i < to; i++) {
            char c = s.charAt(i);
            if (c < '0' || c > '9') {
                throw malformed(s, "value has '" + printable(c) + "' at index " + i + ", only digits are allowed");
            }
            int d = c - '0';
            if (value > (Long.MAX_VALUE - d) / 10) {
                throw malformed(s, "value exceeds " + Long.MAX_VALUE);
            }
            value = value * 10 + d;
        }
        return value;
    }

    private static int hexDigit(char c) {
        if (c >= '0' && c <= '9') {
            return c - '0';
        }
        if (c >= 'A' && c <= 'F') {
            return c - 'A' + 10;
        }
        return -1;
    }

    private static String printable(char c) {
        return hidden(c) || Character.isSurrogate(c) ? escaped(c) : String.valueOf(c);
    }

    /**
     * {@code text} as a message or a log line shows it: each character a reader would not see or could mistake
     * (control, format such as a zero-width space or a bidirectional override, whitespace other than the space,
     * an unpaired surrogate) becomes its Java escape {@code \}{@code uXXXX}, and a backslash becomes two, so two texts
     * that differ always print differently. The same instance when nothing needs escaping; {@code null} as is.
     * Resources, keys and holders can come from a caller (a header, a path), so every message that shows one shows it
     * through here.
     */
    public static String printable(String text) {
        if (text == null) {
            return null;
        }
        int i = 0;
        while (i < text.length() && !escapes(text, i)) {
            i++;
        }
        if (i == text.length()) {
            return text;
        }
        StringBuilder out = new StringBuilder(text.length() + 16).append(text, 0, i);
        for (; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '\\') {
                out.append("\\\\");
            } else if (escapes(text, i)) {
                out.append(escaped(c));
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }

    private static boolean escapes(String text, int i) {
        char c = text.charAt(i);
        if (c == '\\' || hidden(c)) {
            return true;
        }
        if (Character.isHighSurrogate(c)) {
            return i + 1 == text.length() || !Character.isLowSurrogate(text.charAt(i + 1));
        }
        return Character.isLowSurrogate(c) && (i == 0 || !Character.isHighSurrogate(text.charAt(i - 1)));
    }

    private static boolean hidden(char c) {
        return Character.isISOControl(c) || Character.getType(c) == Character.FORMAT
                || c != ' ' && (Character.isWhitespace(c) || Character.isSpaceChar(c));
    }

    private static String escaped(char c) {
        return String.format("\\u%04X", (int) c);
    }

    private static TokenFormatException malformed(String s, String why) {
        return new TokenFormatException("Malformed fencing token '" + shorten(s) + "': " + why
                + "; expected resource#value@holder, optionally followed by !keyId.signature");
    }

    /**
     * {@code s} as a parse error shows it: cut at the first {@code !}, where a signature part may begin (the signature
     * with the other parts is a credential, and messages reach 400 answers and logs), then at 200 characters.
     */
    private static String shorten(String s) {
        int bang = s.indexOf(SIGNATURE_SEPARATOR);
        String shown = bang < 0 ? s : s.substring(0, bang) + SIGNATURE_SEPARATOR + "...";
        return printable(shown.length() > 200 ? shown.substring(0, 200) + "..." : shown);
    }

    private static final char SIGNATURE_SEPARATOR = '!';
}
