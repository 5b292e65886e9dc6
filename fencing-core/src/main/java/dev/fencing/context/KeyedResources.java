package dev.fencing.context;

/**
 * Whether a bound token's resource is {@code resource:key}, decided without building that text: a keyed fence
 * looks its token up on every call, and the text it would build is garbage the moment the lookup ends. A scope asked
 * for several entities reads each bound resource's number once ({@link #numberAt}) and compares numbers instead.
 */
final class KeyedResources {

    private KeyedResources() {
    }

    /**
     * Whether {@code effective} equals {@code resource + ':' + text}, whose length is {@code length} (computed once
     * per lookup): the length first, then the key's part (where the tokens of one resource's entities differ), the
     * colon and the resource last.
     */
    static boolean matches(String effective, String resource, String text, int length) {
        if (effective.length() != length) {
            return false;
        }
        int prefix = resource.length();
        return effective.startsWith(text, prefix + 1) && effective.charAt(prefix) == ':'
                && effective.startsWith(resource);
    }

    /**
     * Whether {@code effective} equals {@code resource + ':' + Long.toString(value)}: the digits from the last one
     * first (where the tokens of one resource's entities differ), which also settle the length, then the colon and
     * the resource. Nothing is computed beforehand: a scope's first lookup most often has one token to match.
     */
    static boolean matchesNumber(String effective, String resource, long value) {
        int prefix = resource.length();
        // endsWithDecimal is true only when the digits start exactly at prefix + 1, so charAt(prefix) is in range
        return endsWithDecimal(effective, prefix + 1, value) && effective.charAt(prefix) == ':'
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
        for (int i = first; i < end; i++) {
            char c = effective.charAt(i);
            if (c < '0' || c > '9') {
                return -1; // ASCII digits only, as Long.toString writes them
            }
        }
        try {
            numbers[slot] = Long.parseLong(effective, from, end, 10);
        } catch (NumberFormatException beyondLong) {
            return -1; // 19 digits past Long.MAX_VALUE or Long.MIN_VALUE
        }
        return from;
    }

    /**
     * Whether {@code text} from {@code from} on is exactly {@code Long.toString(value)}, compared from the last
     * digit (the one ids differ in most often).
     */
    static boolean endsWithDecimal(String text, int from, long value) {
        if (value >= 0 && value <= Integer.MAX_VALUE) {
            return endsWithDecimal(text, from, (int) value); // an id, most often: int division is cheaper
        }
        int i = text.length();
        long rest = value < 0 ? value : -value; // on the negative side, where Long.MIN_VALUE fits too
        do {
            char digit = (char) ('0' - rest % 10);
            rest /= 10;
            if (i <= from || text.charAt(--i) != digit) {
                return false;
            }
        } while (rest != 0);
        if (value < 0 && (i <= from || text.charAt(--i) != '-')) {
            return false;
        }
        return i == from;
    }

    /** As {@link #endsWithDecimal(String, int, long)} for a value that is not negative. */
    private static boolean endsWithDecimal(String text, int from, int value) {
        int i = text.length();
        int rest = value;
        do {
            char digit = (char) ('0' + rest % 10);
            rest /= 10;
            if (i <= from || text.charAt(--i) != digit) {
                return false;
            }
        } while (rest != 0);
        return i == from;
    }
}
