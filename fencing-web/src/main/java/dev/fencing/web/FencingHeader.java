package dev.fencing.web;

import dev.fencing.token.FencingToken;
import dev.fencing.token.TokenFormatException;
import dev.fencing.token.TokenList;

import java.util.Collection;
import java.util.List;

/**
 * The {@code Fencing-Token} HTTP header: one entry per resource, each the token's text form
 * ({@code accounts:42#34@client-7}), comma-separated and/or in repeated header fields. Parsing is strict: an
 * oversized header, too many entries, an empty or malformed entry, or two entries for one resource is a
 * {@link TokenFormatException}, never a token. The rules are {@link TokenList}'s, shared with the other carriers.
 */
public final class FencingHeader {

    /** The header name. */
    public static final String NAME = TokenList.HEADER;

    /** Most entries one request may carry. */
    public static final int MAX_ENTRIES = TokenList.MAX_ENTRIES;

    /** Most characters all {@code Fencing-Token} fields of one request may have together. */
    public static final int MAX_LENGTH = TokenList.MAX_LENGTH;

    private FencingHeader() {
    }

    /** The header value for {@code tokens}; empty string for none. */
    public static String format(Collection<FencingToken> tokens) {
        return TokenList.format(tokens);
    }

    /**
     * Parses every {@code Fencing-Token} field of a request ({@link TokenList#parse}, the rules every carrier shares).
     *
     * @param fields the field values in arrival order (none when the header is absent)
     * @throws TokenFormatException saying what is wrong and in which entry
     */
    public static List<FencingToken> parse(Collection<String> fields) {
        return TokenList.parse(NAME + " header", fields);
    }
}
