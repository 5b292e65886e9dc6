package dev.fencing.token;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The text form of several tokens that a carrier sends together (the {@code Fencing-Token} HTTP header, the
 * {@code Fencing-Token} message header): one entry per resource, each the token's text form
 * ({@code accounts:42#34@client-7}), comma-separated, possibly spread over several fields. Parsing is strict: more
 * than {@value #MAX_LENGTH} characters, more than {@value #MAX_ENTRIES} entries, an empty or malformed entry, or two
 * entries for one resource is a {@link TokenFormatException}, never a token. The one place for these rules.
 */
public final class TokenList {

    /** The header name every carrier uses. */
    public static final String HEADER = "Fencing-Token";

    /** Most entries one list may have. */
    public static final int MAX_ENTRIES = 32;

    /** Most characters all fields of one list may have together. */
    public static final int MAX_LENGTH = 16 * 1024;

    private TokenList() {
    }

    /** The text of {@code tokens}, comma-separated in their order; empty string for none. */
    public static String format(Collection<FencingToken> tokens) {
        return tokens.stream().map(FencingToken::toText).collect(Collectors.joining(", "));
    }

    /**
     * Parses every field of one list.
     *
     * @param carrier what the fields came in, named at the start of each error message ("Fencing-Token header")
     * @param fields  the field values in arrival order (none when absent); {@code null} values are skipped
     * @return the tokens in order, immutable
     * @throws TokenFormatException saying what is wrong and in which entry
     */
    public static List<FencingToken> parse(String carrier, Collection<String> fields) {
        Objects.requireNonNull(carrier, "carrier");
        int length = 0;
        for (String field : fields) {
            length += field == null ? 0 : field.length();
        }
        if (length > MAX_LENGTH) {
            throw new TokenFormatException(carrier + " is " + length + " characters long, more than the "
                    + MAX_LENGTH + " allowed");
        }
        List<FencingToken> tokens = new ArrayList<>();
        Set<String> resources = new HashSet<>();
        for (String field : fields) {
            if (field == null) {
                continue;
            }
            String[] entries = field.split(",", -1);
            for (String raw : entries) {
                String entry = raw.strip();
                if (entry.isEmpty()) {
                    throw new TokenFormatException(carrier + " has an empty entry (position "
                            + (tokens.size() + 1) + ")");
                }
                if (tokens.size() == MAX_ENTRIES) {
                    throw new TokenFormatException(carrier + " has more than " + MAX_ENTRIES + " entries");
                }
                FencingToken token = FencingToken.parse(entry);
                if (!resources.add(token.resource())) {
                    throw new TokenFormatException(carrier + " has two entries for resource '"
                            + FencingToken.printable(token.resource()) + "'");
                }
                tokens.add(token);
            }
        }
        return List.copyOf(tokens);
    }
}
