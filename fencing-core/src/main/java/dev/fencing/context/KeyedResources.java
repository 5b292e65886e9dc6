package dev.fencing.context;

/**
 * Whether a bound token's resource is {@code resource:key}, decided without building that text: a keyed fence
 * looks its token up on every call, and the text it would build is garbage the moment the lookup ends. A text key is
 * matched against each bound resource ({@link #matches}); for a number key each bound resource's number is read once
 * per scope ({@link #numberAt}) and compared as a number.
 */
final class KeyedResources {

    private KeyedResources() {
    }

    /**
     * Whether {@code effective} equals {@code resource + ':' + key}: the length first, then the key's part (where
     * the tokens of one resource's entities differ), the colon and the resource last.
     */
    static boolean matches(String effective, String resource, String key) {
        int prefix = resource.length();
        return effective.length() == prefix + 1 + key.length()
                && effective.startsWith(key, prefix + 1)
                && effective.charAt(prefix) == ':'
                && effective.startsWith(resource);
    }

    /**
     * Where the key of {@code effective} starts when that key is a number: the index after its last colon when what
     * follows is exactly {@code Long.toString(n)} for some {@code long n}, which is stored in {@code numbers[slot]};
     * otherwise -1. Then {@code effective} equals {@code resource + ':' + n} exactly when the result is
     * {@code resource.length() + 1} and {@code effective} starts with {@code resource} (a decimal has no colon).
     */
    static int numberAt(String effective, long[] numbers, int slot) {
        int from = effective.lastIndexOf(':') + 1;
        int end = effective.length();
        if (from == 0 || from == end) {
            return -1;
        }
        boolean negative = effective.charAt(from) == '-';
        int first = negative ? from + 1 : from;
        int digits = end - first;
        if (digits == 0 || digits > 19 || effective.charAt(first) == '0' && (digits > 1 || negative)) {
            return -1; // no digits, too many, a leading zero or "-0": not the text of a long
        }
        long value = 0; // accumulated on the negative side, where Long.MIN_VALUE fits too
        for (int i = first; i < end; i++) {
            int digit = effective.charAt(i) - '0';
            if (digit < 0 || digit > 9 || value < (Long.MIN_VALUE + digit) / 10) {
                return -1;
            }
            value = value * 10 - digit;
        }
        if (!negative) {
            if (value == Long.MIN_VALUE) {
                return -1; // 9223372036854775808 overflows
            }
            value = -value;
        }
        numbers[slot] = value;
        return from;
    }
}
