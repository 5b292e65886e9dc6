package dev.fencing.guard;

import dev.fencing.FencingConfigurationException;
import dev.fencing.context.FencingContext;
import dev.fencing.metrics.AcquisitionCounters;
import dev.fencing.metrics.CheckCounters;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.token.FencingToken;

import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Internal: public for the Spring and AspectJ adapters (fencing-spring), not for applications.
 * Everything the guard needs about one fenced method, resolved once and cached by the adapter: the operation's
 * name for messages, the resource, the optional key, whether it acquires, and its counters. It computes the
 * effective resource of each call and refuses keys without a stable text (see {@link KeyValues}) and effective
 * resources longer than {@link FencingToken#MAX_PART_LENGTH}.
 */
public final class FencePoint {

    private final String operation;
    private final String resource;
    private final KeyFunction key;
    /** {@link KeyFunction#argument()} of the key, asked once; -1 without a key. */
    private final int keyArgument;
    private final String keySource;
    private final boolean acquire;
    private final boolean reportUnchecked;
    /** Whether every {@code long} key (at most 20 characters) fits in an effective resource after this resource. */
    private final boolean numberFits;
    private final CheckCounters checks;
    private final AcquisitionCounters acquisitions;
    private final FencingMetrics metrics;
    /** Whether an unchecked acquiring call of this point was logged ({@link UncheckedLeases}). */
    private final AtomicBoolean uncheckedLogged = new AtomicBoolean();
    /** The counters of observed checks ({@code enforced=false}), registered on the first one. */
    private volatile CheckCounters observedChecks;

    /**
     * @param operation human-readable method name, e.g. {@code AccountRepository.save(Account)}
     * @param resource  the annotation's resource, not blank
     * @param key       key function, or {@code null} to fence the whole resource
     * @param keySource the key as written (for messages), or {@code null}
     * @param acquire   whether this method acquires when no token is bound
     * @param metrics   where its counters come from
     * @throws FencingConfigurationException when the resource is blank, too long for an effective resource, or has a
     *                                       character no reader sees ({@link #unfitName})
     */
    public FencePoint(String operation, String resource, KeyFunction key, String keySource, boolean acquire,
                      FencingMetrics metrics) {
        this(operation, resource, key, keySource, acquire, true, metrics);
    }

    /**
     * As {@link #FencePoint(String, String, KeyFunction, String, boolean, FencingMetrics)}, saying whether an
     * acquiring call is reported when no check presented its lock's token ({@link UncheckedLeases}).
     *
     * @param reportUnchecked {@code false} for an acquiring method that may return without a check (it only reads,
     *                        or writes on some paths only)
     * @throws FencingConfigurationException as that constructor, and when {@code reportUnchecked} is {@code false}
     *                                       on a point that does not acquire
     */
    public FencePoint(String operation, String resource, KeyFunction key, String keySource, boolean acquire,
                      boolean reportUnchecked, FencingMetrics metrics) {
        if (!reportUnchecked && !acquire) {
            throw new FencingConfigurationException("@Fenced(reportUnchecked = false) on " + operation
                    + " applies to acquiring methods only; it does not acquire (add acquire = true, or remove "
                    + "reportUnchecked)");
        }
        this.reportUnchecked = reportUnchecked;
        this.operation = Objects.requireNonNull(operation, "operation");
        if (resource == null || resource.isBlank()) {
            throw new FencingConfigurationException("@Fenced on " + operation + " has a blank resource; "
                    + "name the lock, e.g. @Fenced(resource = \"accounts\")");
        }
        int room = key == null ? resource.length() : resource.length() + 2; // ':' and at least one key character
        if (room > FencingToken.MAX_PART_LENGTH) {
            throw new FencingConfigurationException("@Fenced on " + operation + " has a resource of "
                    + resource.length() + " characters" + (key == null ? "" : " plus a key") + ", longer than the "
                    + FencingToken.MAX_PART_LENGTH + " an effective resource may have: '" + abbreviate(resource)
                    + "'; use a shorter resource name");
        }
        String unfit = unfitName(resource);
        if (unfit != null) {
            throw new FencingConfigurationException("@Fenced on " + operation + " has the resource '"
                    + FencingToken.printable(resource) + "' (invisible characters shown escaped), " + unfit);
        }
        // interned: the tokens this point acquires carry this instance, as do those made from a literal, so finding
        // the bound token and the store's slot compares references, not text
        this.resource = resource.intern();
        this.key = key;
        this.keyArgument = key == null ? -1 : key.argument();
        this.keySource = keySource;
        this.acquire = acquire;
        this.numberFits = resource.length() + 1 + 20 <= FencingToken.MAX_PART_LENGTH;
        this.metrics = metrics;
        this.checks = metrics.checks(resource);
        this.acquisitions = metrics.acquisitions(resource);
    }

    /**
     * The effective resource for these arguments: the resource, or {@code resource:key}.
     *
     * @throws InvalidKeyException when the key is {@code null}, blank, has no stable text, or makes the effective
     *                             resource longer than {@link FencingToken#MAX_PART_LENGTH}
     */
    public String effectiveResource(Object[] args) {
        return key == null ? resource : resourceOf(keyOf(args));
    }

    /**
     * The key of a call with these arguments, checked, as the effective resource appends it: a {@link Long} or
     * {@link Integer} (its decimal text always fits), else the key's text; {@code null} for an unkeyed point.
     *
     * @throws InvalidKeyException when the key is {@code null}, blank, has no stable text, or makes the effective
     *                             resource longer than {@link FencingToken#MAX_PART_LENGTH}
     */
    public Object keyOf(Object[] args) {
        return key == null ? null : checkedKey(args, null);
    }

    /**
     * {@link #keyOf(Object[])} for a call whose argument at {@link #keyArgument()} is {@code argument}, its other
     * arguments unread.
     *
     * @throws InvalidKeyException as {@link #keyOf(Object[])}, and when the key does not read one argument alone
     */
    public Object keyOfArgument(Object argument) {
        if (keyArgument < 0) {
            throw new InvalidKeyException(resource, "Fencing key '" + keySource + "' of " + operation + " does not "
                    + "read one argument alone, so it cannot be computed from one; the call is refused");
        }
        return checkedKey(null, argument);
    }

    /**
     * The index of the one argument this point's key is computed from, or -1: no key, or one that may read several
     * ({@link KeyFunction#argument()}).
     */
    public int keyArgument() {
        return keyArgument;
    }

    /** The checked key from {@code args}, or from the one {@code argument} when {@code args} is {@code null}. */
    private Object checkedKey(Object[] args, Object argument) {
        Object value;
        String text;
        try {
            value = args != null ? key.keyOf(args) : key.keyOfArgument(argument);
            if (numberFits && (value instanceof Long || value instanceof Integer)) {
                return value; // an id: its text is never blank and always fits
            }
            text = KeyValues.textOf(value);
        } catch (RuntimeException e) {
            throw new InvalidKeyException(resource, "Fencing key '" + keySource + "' of " + operation
                    + " could not be evaluated (" + e + "): cannot tell which '" + resource
                    + "' entity to fence, so the call is refused", e);
        }
        if (text == null || text.isBlank()) {
            throw refused(value, text);
        }
        int length = resource.length() + 1 + text.length();
        if (length > FencingToken.MAX_PART_LENGTH) {
            throw new InvalidKeyException(resource, "Fencing key '" + keySource + "' of " + operation
                    + " makes the effective resource '" + resource + ":" + FencingToken.printable(abbreviate(text))
                    + "' " + length
                    + " characters long, longer than the limit of " + FencingToken.MAX_PART_LENGTH
                    + " characters; the call is refused");
        }
        return text;
    }

    /**
     * The effective resource for a key from {@link #keyOf}: the resource, or {@code resource:key}. Built when no
     * bound token's resource matched the key (for the message) or to acquire, so this is where a key text no token
     * could ever carry is refused, rather than reported as a missing token on every call.
     *
     * @throws InvalidKeyException when the key's text has a control character or an unpaired UTF-16 surrogate, which
     *                             no token's resource may have (the message shows the text escaped)
     */
    public String resourceOf(Object key) {
        if (key == null) {
            return resource;
        }
        if (!(key instanceof String text)) {
            return resource + ':' + ((Number) key).longValue();
        }
        String effective = resource + ':' + text;
        if (FencingToken.unfit("resource", effective) != null) {
            throw new InvalidKeyException(resource, "Fencing key '" + keySource + "' of " + operation
                    + " evaluated to '" + FencingToken.printable(abbreviate(text)) + "', a text with a control "
                    + "character or an unpaired UTF-16 surrogate, which no fencing token's resource may have: cannot "
                    + "tell which '" + resource + "' entity to fence, so the call is refused");
        }
        return effective;
    }

    /**
     * The token bound on this thread for the effective resource of a key from {@link #keyOf}, or {@code null}: for
     * a key, found without building the effective resource's text (the token's resource is that text).
     */
    public FencingToken current(Object key) {
        return key == null ? FencingContext.current(resource) : FencingContext.current(resource, key);
    }

    /**
     * {@link #current(Object)} as this point's check presents the token: an acquired lock's use is marked
     * ({@link FencingContext#present(String)}).
     */
    public FencingToken present(Object key) {
        return key == null ? FencingContext.present(resource) : FencingContext.present(resource, key);
    }

    private InvalidKeyException refused(Object value, String text) {
        String start = "Fencing key '" + keySource + "' of " + operation;
        String end = ": cannot tell which '" + resource + "' entity to fence, so the call is refused";
        if (value == null) {
            return new InvalidKeyException(resource, start + " evaluated to null" + end);
        }
        String type = value.getClass().getTypeName();
        String why = KeyValues.refusalOf(value);
        if (why == null) { // a blank text, or a FencingKey whose fencingKey() returned null
            return new InvalidKeyException(resource, start + " evaluated to a " + type + " whose key text is "
                    + (text == null ? "null" : "blank") + end);
        }
        return new InvalidKeyException(resource, start + " evaluated to a " + type + ", " + why + end
                + KeyValues.remedy(value.getClass(), keySource));
    }

    /**
     * Why {@code resource} (not blank, not too long) cannot name a resource, or {@code null} when it can: a control
     * character or an unpaired UTF-16 surrogate, which no token's resource may have (every call would fail); leading
     * or trailing whitespace; an invisible character (a format character such as a zero-width space, U+200B, or a
     * bidirectional mark, or whitespace other than the space, such as a no-break space, U+00A0). Such a name looks
     * like another one in code, logs and metrics, and would be a resource of its own, with its own lock and max_seen.
     */
    static String unfitName(String resource) {
        if (FencingToken.unfit("resource", resource) != null) {
            return "with a control character or an unpaired UTF-16 surrogate, which no fencing token's resource may "
                    + "have: every call would fail; remove it";
        }
        if (isSpace(resource.codePointAt(0)) || isSpace(resource.codePointBefore(resource.length()))) {
            return "with leading or trailing whitespace: it looks like '" + FencingToken.printable(resource.strip())
                    + "' in code, logs and metrics, but is a resource of its own, with its own lock and max_seen; "
                    + "remove the whitespace";
        }
        for (int i = 0; i < resource.length(); ) {
            int c = resource.codePointAt(i);
            if ((Character.getType(c) == Character.FORMAT && !joinsWhereNeeded(resource, i, c))
                    || c != ' ' && isSpace(c) || isBlankLetter(c)) {
                return "with an invisible character at index " + i + " (U+" + String.format("%04X", c) + "): it "
                        + "looks like a name without it in code, logs and metrics, but is a resource of its own, "
                        + "with its own lock and max_seen; remove it" + (isSpace(c) ? ", or write a plain space" : "");
            }
            i += Character.charCount(c);
        }
        return null;
    }

    private static boolean isSpace(int c) {
        return Character.isWhitespace(c) || Character.isSpaceChar(c);
    }

    /**
     * Whether {@code c} is a character drawn as nothing that Unicode does not class as a format character or a space:
     * the combining grapheme joiner (U+034F), variation selectors, the Hangul fillers, the braille blank, the
     * Mongolian free variation selectors and the Khmer inherent vowels (Unicode's default-ignorable code points that
     * are not format characters).
     */
    private static boolean isBlankLetter(int c) {
        return c == 0x034F || c >= 0xFE00 && c <= 0xFE0F || c >= 0xE0100 && c <= 0xE01EF || c == 0x115F
                || c == 0x1160 || c == 0x3164 || c == 0xFFA0 || c == 0x2800 || c >= 0x180B && c <= 0x180F
                || c == 0x17B4 || c == 0x17B5;
    }

    /**
     * Whether a zero-width non-joiner (U+200C) or joiner (U+200D) at {@code at} sits where a script needs it: between
     * two characters that are neither ASCII nor spaces (Persian and Indic words, emoji sequences). Next to ASCII, at
     * either end, or any other format character, it only hides a difference.
     */
    private static boolean joinsWhereNeeded(String resource, int at, int c) {
        if (c != 0x200C && c != 0x200D || at == 0 || at + 1 >= resource.length()) {
            return false;
        }
        int before = resource.codePointBefore(at);
        int after = resource.codePointAt(at + 1);
        return before > 0x7F && after > 0x7F && !isSpace(before) && !isSpace(after)
                && Character.getType(before) != Character.FORMAT && Character.getType(after) != Character.FORMAT;
    }

    /** At most 64 characters of {@code text}, for messages. */
    static String abbreviate(String text) {
        return text.length() <= 64 ? text : text.substring(0, 61) + "...";
    }

    public String operation() {
        return operation;
    }

    public String resource() {
        return resource;
    }

    /** The key function, or {@code null} when the whole resource is fenced. */
    public KeyFunction key() {
        return key;
    }

    public boolean hasKey() {
        return key != null;
    }

    public boolean acquire() {
        return acquire;
    }

    public CheckCounters checks() {
        return checks;
    }

    /**
     * The counters of this point's checks in observe mode ({@code enforced=false}): registered on the first observed
     * check and reused after, so a point never observed adds no meter.
     */
    public CheckCounters observedChecks() {
        CheckCounters current = observedChecks;
        if (current == null) {
            synchronized (this) {
                current = observedChecks;
                if (current == null) {
                    current = metrics.checks(resource, false);
                    observedChecks = current;
                }
            }
        }
        return current;
    }

    /** The counters of a check: {@link #checks()} when enforced, {@link #observedChecks()} when observed. */
    public CheckCounters checks(boolean enforced) {
        return enforced ? checks : observedChecks();
    }

    public AcquisitionCounters acquisitions() {
        return acquisitions;
    }

    /** Whether an acquiring call of this point is reported when no check presented its lock's token. */
    public boolean reportUnchecked() {
        return reportUnchecked;
    }

    /** The key as written, or {@code null} for a point without a key. */
    public String keySource() {
        return keySource;
    }

    /** True exactly once: for the first unchecked acquiring call of this point, which is logged. */
    boolean firstUncheckedLease() {
        return !uncheckedLogged.get() && uncheckedLogged.compareAndSet(false, true);
    }

    @Override
    public String toString() {
        return "FencePoint[" + operation + ", resource=" + resource + (key == null ? "" : ", key=" + keySource)
                + (acquire ? ", acquire" : "") + "]";
    }
}
