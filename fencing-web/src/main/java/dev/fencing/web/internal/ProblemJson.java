package dev.fencing.web.internal;

import java.math.BigDecimal;
import java.util.HashMap;
import java.util.Map;

/**
 * Reads the top-level members of a JSON object, as a problem detail is one, without a JSON library: strings,
 * numbers, {@code true}/{@code false}/{@code null} are kept (as {@link String}, {@link BigDecimal}, {@link Boolean},
 * {@code null}), nested objects and arrays are checked and skipped. Anything that is not one well-formed object
 * (or nests deeper than {@value #MAX_DEPTH}) yields {@code null}: the caller then leaves the response alone.
 */
final class ProblemJson {

    static final int MAX_DEPTH = 32;

    private static final Object NESTED = new Object();

    private final String text;
    private int at;

    private ProblemJson(String text) {
        this.text = text;
    }

    /** The object's top-level members, or {@code null} when {@code text} is not one JSON object. */
    static Map<String, Object> parse(String text) {
        try {
            ProblemJson reader = new ProblemJson(text);
            reader.space();
            if (!reader.peek('{')) {
                return null;
            }
            Map<String, Object> members = reader.object(1, true);
            reader.space();
            return reader.at == text.length() ? members : null;
        } catch (IllegalArgumentException | IndexOutOfBoundsException e) {
            return null;
        }
    }

    private Map<String, Object> object(int depth, boolean keep) {
        if (depth > MAX_DEPTH) {
            throw new IllegalArgumentException("too deep");
        }
        expect('{');
        Map<String, Object> members = keep ? new HashMap<>() : null;
        space();
        if (peek('}')) {
            at++;
            return members;
        }
        while (true) {
            space();
            String name = string();
            space();
            expect(':');
            space();
            Object value = value(depth);
            if (keep) {
                members.put(name, value == NESTED ? null : value);
            }
            space();
            char c = text.charAt(at++);
            if (c == '}') {
                return members;
            }
            if (c != ',') {
                throw new IllegalArgumentException("expected , or }");
            }
        }
    }

    private void array(int depth) {
        if (depth > MAX_DEPTH) {
            throw new IllegalArgumentException("too deep");
        }
        expect('[');
        space();
        if (peek(']')) {
            at++;
            return;
        }
        while (true) {
            space();
            value(depth);
            space();
            char c = text.charAt(at++);
            if (c == ']') {
                return;
            }
            if (c != ',') {
                throw new IllegalArgumentException("expected , or ]");
            }
        }
    }

    private Object value(int depth) {
        char c = text.charAt(at);
        switch (c) {
            case '{' -> {
                object(depth + 1, false);
                return NESTED;
            }
            case '[' -> {
                array(depth + 1);
                return NESTED;
            }
            case '"' -> {
                return string();
            }
            case 't' -> {
                literal("true");
                return Boolean.TRUE;
            }
            case 'f' -> {
                literal("false");
                return Boolean.FALSE;
            }
            case 'n' -> {
                literal("null");
                return null;
            }
            default -> {
                return number();
            }
        }
    }

    private String string() {
        expect('"');
        StringBuilder out = new StringBuilder();
        while (true) {
            char c = text.charAt(at++);
            if (c == '"') {
                return out.toString();
            }
            if (c < 0x20) {
                throw new IllegalArgumentException("control character in string");
            }
            if (c != '\\') {
                out.append(c);
                continue;
            }
            char escaped = text.charAt(at++);
            switch (escaped) {
                case '"', '\\', '/' -> out.append(escaped);
                case 'b' -> out.append('\b');
                case 'f' -> out.append('\f');
                case 'n' -> out.append('\n');
                case 'r' -> out.append('\r');
                case 't' -> out.append('\t');
                case 'u' -> {
                    out.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
                    at += 4;
                }
                default -> throw new IllegalArgumentException("bad escape");
            }
        }
    }

    private BigDecimal number() {
        int start = at;
        while (at < text.length() && "+-0123456789.eE".indexOf(text.charAt(at)) >= 0) {
            at++;
        }
        if (start == at) {
            throw new IllegalArgumentException("unexpected character");
        }
        return new BigDecimal(text.substring(start, at)); // NumberFormatException is an IllegalArgumentException
    }

    private void literal(String word) {
        if (!text.startsWith(word, at)) {
            throw new IllegalArgumentException("expected " + word);
        }
        at += word.length();
    }

    private void expect(char c) {
        if (text.charAt(at++) != c) {
            throw new IllegalArgumentException("expected " + c);
        }
    }

    private boolean peek(char c) {
        return at < text.length() && text.charAt(at) == c;
    }

    private void space() {
        while (at < text.length() && " \t\r\n".indexOf(text.charAt(at)) >= 0) {
            at++;
        }
    }
}
