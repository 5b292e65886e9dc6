package dev.fencing.web.internal;

import dev.fencing.mode.FenceMode;
import dev.fencing.mode.FenceModes;
import dev.fencing.rule.TokenRejectedException;
import dev.fencing.signing.KeyRing;
import dev.fencing.signing.TokenSigner;
import dev.fencing.signing.TokenVerifier;
import dev.fencing.signing.VerificationKey;
import dev.fencing.token.FencingToken;
import dev.fencing.web.FencingHeader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The header admission of the {@code Fencing-Token} filters in observe mode: a forged token of an observed resource
 * is admitted (the fence counts it and lets the call run), of an enforced one refused; a switch is read per request.
 */
class HeaderAdmissionObserveTest {

    private static final byte[] SECRET = "0123456789abcdef0123456789abcdef".getBytes();

    @Test
    void aForgedTokenOfAnObservedResourceIsAdmittedAndRefusedOnceEnforced() {
        TokenVerifier verifier = new TokenVerifier(KeyRing.of(VerificationKey.hmac("k1", SECRET)));
        FenceModes modes = new FenceModes(FenceMode.ENFORCE, Map.of("accounts", FenceMode.OBSERVE));
        List<TokenRejectedException> told = new ArrayList<>();
        HeaderAdmission admission = new HeaderAdmission(verifier, ForgedTokenCounters.NONE, told::add, modes);
        FencingToken forged = new FencingToken("accounts:42", 7, "evil");
        List<String> fields = List.of(FencingHeader.format(List.of(forged)));

        HeaderAdmission.Result observed = admission.admit(fields, null, () -> "POST /internal/deposit");
        assertThat(observed.admitted()).isTrue();
        assertThat(observed.tokens()).containsExactly(forged);
        assertThat(told).isEmpty();

        FencingToken otherResource = new FencingToken("orders:1", 7, "evil");
        assertThat(admission.admit(List.of(FencingHeader.format(List.of(otherResource))), null, () -> "POST /x")
                .admitted()).isFalse();

        modes.set("accounts", FenceMode.ENFORCE, "test");
        assertThat(admission.admit(fields, null, () -> "POST /internal/deposit").admitted()).isFalse();
        assertThat(told).hasSize(2);

        FencingToken signed = TokenSigner.hmac("k1", SECRET).sign(new FencingToken("accounts:42", 8, "h"));
        assertThat(admission.admit(List.of(FencingHeader.format(List.of(signed))), null, () -> "POST /x").admitted())
                .isTrue();
    }

    /**
     * A declared resource with a colon in its name ({@code orders:eu}) is judged by its own mode, not by the mode of
     * the text before its first colon: a forged token of the enforced {@code orders:eu} beside an observed
     * {@code orders} was admitted (the request ran up to the fenced call), and one of an observed {@code orders:eu}
     * beside an enforced {@code orders} refused.
     */
    @Test
    @Timeout(10)
    void aResourceWithAColonInItsNameIsJudgedByItsOwnMode() {
        TokenVerifier verifier = new TokenVerifier(KeyRing.of(VerificationKey.hmac("k1", SECRET)));
        FenceModes modes = new FenceModes(FenceMode.ENFORCE, Map.of("orders", FenceMode.OBSERVE));
        modes.declare(java.util.Set.of("orders", "orders:eu"), java.util.Set.of("orders", "orders:eu"));
        HeaderAdmission admission = new HeaderAdmission(verifier, ForgedTokenCounters.NONE, e -> { }, modes);

        FencingToken enforcedEntity = new FencingToken("orders:eu:7", 7, "evil");
        assertThat(admission.admit(List.of(FencingHeader.format(List.of(enforcedEntity))), null, () -> "POST /x")
                .admitted()).as("a forged token of the enforced orders:eu").isFalse();
        FencingToken observedEntity = new FencingToken("orders:7", 7, "evil");
        assertThat(admission.admit(List.of(FencingHeader.format(List.of(observedEntity))), null, () -> "POST /x")
                .admitted()).as("a forged token of the observed orders").isTrue();

        modes.set("orders", FenceMode.ENFORCE, "test");
        modes.set("orders:eu", FenceMode.OBSERVE, "test");
        assertThat(admission.admit(List.of(FencingHeader.format(List.of(enforcedEntity))), null, () -> "POST /x")
                .admitted()).as("a forged token of the observed orders:eu").isTrue();
        assertThat(admission.admit(List.of(FencingHeader.format(List.of(observedEntity))), null, () -> "POST /x")
                .admitted()).as("a forged token of the enforced orders").isFalse();
    }
}
