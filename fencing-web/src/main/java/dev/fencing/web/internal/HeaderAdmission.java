package dev.fencing.web.internal;

import dev.fencing.mode.FenceModes;
import dev.fencing.guard.RejectionListener;
import dev.fencing.guard.LogPace;
import dev.fencing.rule.ForgedTokenException;
import dev.fencing.signing.TokenVerifier;
import dev.fencing.signing.Verification;
import dev.fencing.token.FencingToken;
import dev.fencing.token.TokenFormatException;
import dev.fencing.web.FencingHeader;
import org.springframework.http.ProblemDetail;

import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * What a server does with the {@code Fencing-Token} fields of an incoming request, whatever its stack: refuses them
 * from an untrusted caller (403), parses them strictly (400 on a malformed header), verifies their signatures when
 * built with a verifier (403 forged, counted and told to the rejection listener), and otherwise admits the tokens for
 * binding as remote. Immutable and thread-safe. Internal to fencing-web (shared by {@code FencingTokenFilter} and
 * {@code FencingTokenWebFilter}), not an API for applications.
 */
public final class HeaderAdmission {

    /** Most characters of a parse error's message that a 400 answer repeats. */
    public static final int MAX_DETAIL_LENGTH = 256;

    /** The outcome: the tokens to bind, or the answer that refuses the request (then {@code tokens} is empty). */
    public record Result(List<FencingToken> tokens, ProblemDetail refusal) {

        /** Whether the request may run with {@link #tokens()} bound. */
        public boolean admitted() {
            return refusal == null;
        }

        /**
         * The resources of {@link #tokens()}, which the filters record on the request: a fenced write that finds no
         * token for one of them lost it inside the service (500), not at the caller (428).
         */
        public java.util.Set<String> resources() {
            java.util.Set<String> resources = new java.util.HashSet<>();
            tokens.forEach(token -> resources.add(token.resource()));
            return resources;
        }
    }

    private final TokenVerifier verifier;
    private final ForgedTokenCounters forgedCounters;
    private final RejectionListener rejections;
    private final FenceModes modes;

    /**
     * @param verifier       verifies each token's signature; {@code null}: none is verified
     * @param forgedCounters counts the tokens refused as forged
     * @param rejections     told of each token refused as forged ({@code null}: nobody); what it throws is ignored
     */
    public HeaderAdmission(TokenVerifier verifier, ForgedTokenCounters forgedCounters, RejectionListener rejections) {
        this(verifier, forgedCounters, rejections, null);
    }

    /**
     * As above; a forged token whose base resource {@code modes} observes is admitted instead of refused, so that the
     * fence's own check counts it ({@code forged}, {@code enforced=false}) and lets the call run, as observe mode
     * promises ({@code null}: every resource enforced).
     */
    public HeaderAdmission(TokenVerifier verifier, ForgedTokenCounters forgedCounters, RejectionListener rejections,
                           FenceModes modes) {
        this.modes = modes;
        this.verifier = verifier;
        this.forgedCounters = Objects.requireNonNull(forgedCounters, "forgedCounters");
        this.rejections = rejections == null ? RejectionListener.NONE : rejections;
    }

    /**
     * Decides on a request's {@code Fencing-Token} fields.
     *
     * @param fields         the field values in arrival order (none when the header is absent)
     * @param untrustedDetail {@code null} when the caller may send the header; otherwise the constant detail of
     *                       the 403 a request carrying it gets
     * @param operation      the request as a forged-token exception names it (method and path), asked only then
     */
    public Result admit(List<String> fields, String untrustedDetail, Supplier<String> operation) {
        if (fields.isEmpty()) {
            return new Result(List.of(), null);
        }
        if (untrustedDetail != null) {
            return new Result(List.of(), FencingProblems.untrustedHeader(untrustedDetail));
        }
        List<FencingToken> tokens;
        try {
            tokens = FencingHeader.parse(fields);
        } catch (TokenFormatException e) {
            return new Result(List.of(), FencingProblems.malformedHeader(capped(e.getMessage())));
        }
        if (verifier != null) {
            for (FencingToken token : tokens) {
                Verification verification = verifier.verify(token);
                if (!verification.valid()) {
                    if (modes != null && modes.observesResourceOf(token.resource())) {
                        continue; // observe mode: the fence judges it (counted there) and the call runs
                    }
                    forgedCounters.increment(token.resource());
                    String why = verification.reason(token);
                    String where = operation.get() + " (" + FencingHeader.NAME + " header)";
                    tell(new ForgedTokenException(token.resource(), token, why, where));
                    logForged(token, why, where);
                    return new Result(List.of(), FencingProblems.forged(token.resource(), token));
                }
            }
        } else {
            for (FencingToken token : tokens) {
                if (token.isSigned()) {
                    warnUnverified(token);
                    break;
                }
            }
        }
        return new Result(tokens, null);
    }

    /** Past this many milliseconds since the last, a forged token's refusal is logged again. */
    static final long LOG_INTERVAL_MILLIS = 60_000;

    /** Most reasons whose refusals are logged apart; more share one pace. */
    private static final int MAX_REASONS = 64;

    /** Per reason (why, with its key id): one line a minute, and how many refusals came since. */
    private final LogPace forgedLogged = new LogPace(MAX_REASONS, LOG_INTERVAL_MILLIS, "");
    private final java.util.concurrent.atomic.AtomicBoolean unverifiedLogged =
            new java.util.concurrent.atomic.AtomicBoolean();

    /**
     * Logs a forged token's refusal at WARNING, at most once a minute per filter: why (an unknown or retired key, a
     * signature that does not match, unsigned) and the key id, never key material. The 403 names neither, and an
     * operator must tell a key rotated in the wrong order from an attack.
     */
    private void logForged(FencingToken token, String why, String where) {
        // the reason without the resource: each cause (a key, unsigned, a bad signature) keeps its own pace, so a
        // stray unsigned caller does not hide a rotation error, nor the reverse
        long skipped = forgedLogged.due(why.replace(token.resource(), ""), System.currentTimeMillis());
        if (skipped < 0) {
            return;
        }
        log.log(System.Logger.Level.WARNING, () -> "Refused the token for resource '"
                + FencingToken.printable(token.resource()) + "' in the " + FencingHeader.NAME + " header of " + where
                + " as forged: " + why + "; answered 403. An unknown or retired key after a rotation means the "
                + "services' fencing.signing keys differ. At most one such line a minute per cause"
                + (skipped == 0 ? "" : " (" + skipped + " more of this cause since the last line)")
                + "; every refusal is counted in fencing.checks{outcome=\"forged\"}");
    }

    /**
     * Warns, once per filter, that signed tokens arrive where no verifier checks them: their signatures are ignored,
     * so any caller's unsigned or badly signed token is accepted here too (the calling service signs; this one was
     * meant to verify).
     */
    private void warnUnverified(FencingToken token) {
        if (unverifiedLogged.compareAndSet(false, true)) {
            log.log(System.Logger.Level.WARNING, () -> "A signed token in the " + FencingHeader.NAME + " header (key '"
                    + token.signature().keyId() + "', resource '" + FencingToken.printable(token.resource())
                    + "') reached this service, which has no TokenVerifier: its signature is not checked, and an "
                    + "unsigned or forged token would be accepted as well. Configure the same keys here "
                    + "(fencing.signing.*) to verify them; logged once");
        }
    }

    private static final System.Logger log = System.getLogger(HeaderAdmission.class.getName());

    private void tell(ForgedTokenException forged) {
        try {
            rejections.rejected(forged);
        } catch (RuntimeException ignored) {
            // the listener is advisory; the refusal is what the caller gets
        }
    }

    /** {@code message} cut to {@link #MAX_DETAIL_LENGTH} characters, marked with "..." when cut. */
    public static String capped(String message) {
        if (message == null) {
            return "";
        }
        if (message.length() <= MAX_DETAIL_LENGTH) {
            return message;
        }
        int end = Character.isHighSurrogate(message.charAt(MAX_DETAIL_LENGTH - 1)) ? MAX_DETAIL_LENGTH - 1
                : MAX_DETAIL_LENGTH;
        return message.substring(0, end) + "...";
    }
}
