package dev.fencing.context;

/**
 * Whether a bound token's resource is {@code resource:key}, decided without building that text: a keyed fence
 * looks its token up on every call, and the text it would build is garbage the moment the lookup ends.
 */
final class KeyedResources {

    private KeyedResources() {
    }

    /**
     * Whether {@code effective} equals {@code resource + ':' + key}.
     *
     * @param key a {@link String}, or a {@link Long} or {@link Integer} (its decimal text)
     */
    static boolean matches(String effective, String resource, Object key) {
        int prefix = resource.length();
        if (effective.length() <= prefix + 1 || effective.charAt(prefix) != ':' || !effective.startsWith(resource)) {
            return false;
        }
        if (key instanceof String text) {
            return effective.length() == prefix + 1 + text.length() && effective.startsWith(text, prefix + 1);
        }
        return endsWithDecimal(effective, prefix + 1, ((Number) key).longValue());
    }

    /** Whether {@code text} from {@code from} on is exactly {@code Long.toString(value)}. */
    static boolean endsWithDecimal(String text, int from, long value) {
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
}
