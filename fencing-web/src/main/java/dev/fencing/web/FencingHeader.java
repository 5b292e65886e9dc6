package dev.fencing.web;

import dev.fencing.token.FencingToken;
import dev.fencing.token.TokenFormatException;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The {@code Fencing-Token} HTTP header: one entry per resource, each the token's text form
 * ({@code accounts:42#34@client-7}), comma-separated and/or in repeated header fields. Parsing is strict: an
 * oversized header, too many entries, an empty or malformed entry, or two entries for one resource is a
 * {@link TokenFormatException}, never a token.
 */
public final class FencingHeader {

    /** The header name. */
    public static final String NAME = "Fencing-Token";

    /** Most entries one request may carry. */
    public static final int MAX_ENTRIES = 32;

    /** Most characters all {@code Fencing-Token} fields of one request may have together. */
    public static final int MAX_LENGTH = 16 * 1024;

    private FencingHeader() {
    }

    /** The header value for {@code tokens}; empty string for none. */
    public static String format(Collection<FencingToken> tokens) {
        return tokens.stream().map(FencingToken::toText).collect(Collectors.joining(", "));
    }

    /**
     * Parses every {@code Fencing-Token} field of a request.
     *
     * @param fields the field values in arrival order (none when the header is absent)
     * @throws TokenFormatException saying what is wrong and in which entry
     */
    public static List<FencingToken> parse(Collection<String> fields) {
        int length = 0;
        for (String field : fields) {
            length += field == null ? 0 : field.length();
        }
        if (length > MAX_LENGTH) {
            throw new TokenFormatException(NAME + " header is " + length + " characters long, more than the "
                    + MAX_LENGTH + " allowed");
        }
        List<FencingToken> tokens = new ArrayList<>();
        Set<String> resources = new HashSet<>();
        for (String field : fields) {
            if (field == null) {
                continue;
            }
            String[] entries = field.split(",", -1);
            for (int i = 0; i < entries.length; i++) {
                String entry = entries[i].strip();
                if (entry.isEmpty()) {
                    throw new TokenFormatException(NAME + " header has an empty entry (position " + (tokens.size() + 1) + ")");
                }
                if (tokens.size() == MAX_ENTRIES) {
                    throw new TokenFormatException(NAME + " header has more than " + MAX_ENTRIES + " entries");
                }
                FencingToken token = FencingToken.parse(entry);
                if (!resources.add(token.resource())) {
                    throw new TokenFormatException(NAME + " header has two entries for resource '" + token.resource() + "'");
                }
                tokens.add(token);
            }
        }
        return List.copyOf(tokens);
    }
}
