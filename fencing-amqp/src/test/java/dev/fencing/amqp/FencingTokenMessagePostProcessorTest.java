package dev.fencing.amqp;

import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingScope;
import dev.fencing.context.TokenUse;
import dev.fencing.context.MissingTokenException;
import dev.fencing.signing.TokenSigner;
import dev.fencing.token.FencingToken;
import dev.fencing.token.TokenFormatException;
import dev.fencing.token.TokenList;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;

import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class FencingTokenMessagePostProcessorTest {

    private static final FencingToken ACCOUNTS = new FencingToken("accounts:42", 7, "producer-a");
    private static final FencingToken LEDGER = new FencingToken("ledger", 3, "producer-a");

    private static Message message() {
        return new Message("body".getBytes(StandardCharsets.UTF_8), new MessageProperties());
    }

    private static String header(Message message) {
        return message.getMessageProperties().getHeader(FencingTokenMessagePostProcessor.HEADER);
    }

    @Test
    void writesEveryBoundTokenSignedOnesInTheirSignedForm() {
        FencingToken signed = TokenSigner.hmac("k1",
                "0123456789abcdef0123456789abcdef".getBytes(StandardCharsets.UTF_8))
                .sign(ACCOUNTS);
        Message message = message();
        message.getMessageProperties().setHeader(FencingTokenMessagePostProcessor.HEADER, "accounts:42#999@forged");
        try (FencingScope ignored = FencingContext.bind(signed, LEDGER)) {
            new FencingTokenMessagePostProcessor().postProcessMessage(message, null, "ex", "key");
        }
        assertThat(header(message)).isEqualTo(signed.toText() + ", " + LEDGER.toText());
    }

    @Test
    void sendingAnAcquiredLocksTokenCountsAsPresentingIt() {
        TokenUse accounts = new TokenUse();
        TokenUse ledger = new TokenUse();
        Message message = message();
        try (FencingScope outer = FencingContext.bindAcquired(LEDGER, ledger);
             FencingScope inner = FencingContext.bindAcquired(ACCOUNTS, accounts)) {
            FencingTokenMessagePostProcessor.forResources(List.of("accounts")).postProcessMessage(message, null, "ex",
                    "key");
        }
        assertThat(header(message)).isEqualTo(ACCOUNTS.toText());
        assertThat(accounts.isUsed()).isTrue();
        assertThat(ledger.isUsed()).as("a token the message did not carry").isFalse();
    }

    @Test
    void sendsNoHeaderWhenNothingIsBound() {
        Message message = new FencingTokenMessagePostProcessor().postProcessMessage(message());
        assertThat(header(message)).isNull();
    }

    @Test
    void refusesToSendMoreTokensThanAConsumerAccepts() {
        List<FencingToken> tooMany = new java.util.ArrayList<>();
        for (int i = 0; i <= TokenList.MAX_ENTRIES; i++) {
            tooMany.add(new FencingToken("r" + i, 1, "p"));
        }
        Message message = message();
        try (FencingScope ignored = FencingContext.bind(tooMany)) {
            assertThatThrownBy(() -> new FencingTokenMessagePostProcessor()
                    .postProcessMessage(message, null, "ex", "key"))
                    .isInstanceOf(TokenFormatException.class)
                    .hasMessageContaining("exchange 'ex'").hasMessageContaining("33 tokens");
        }
        assertThat(header(message)).isNull();
    }

    @Test
    void forResourcesSendsOnlyThoseAndBaseNamesCoverEffectiveOnes() {
        Message message = message();
        try (FencingScope ignored = FencingContext.bind(ACCOUNTS, LEDGER)) {
            FencingTokenMessagePostProcessor.forResources(List.of("accounts"))
                    .postProcessMessage(message, null, "ex", "key");
        }
        assertThat(header(message)).isEqualTo(ACCOUNTS.toText());
    }

    @Test
    void forResourcesRefusesToSendWithoutATokenForANamedResource() {
        Message message = message();
        try (FencingScope ignored = FencingContext.bind(LEDGER)) {
            assertThatThrownBy(() -> FencingTokenMessagePostProcessor.forResources(List.of("ledger", "accounts"))
                    .postProcessMessage(message, null, "orders", "eu"))
                    .isInstanceOf(MissingTokenException.class)
                    .hasMessageContaining("'accounts'")
                    .hasMessageContaining("exchange 'orders' with routing key 'eu'");
        }
        assertThat(header(message)).isNull();
        // "accounts" does not cover "accountsX:1"
        try (FencingScope ignored = FencingContext.bind(new FencingToken("accountsX:1", 1, "p"))) {
            assertThatThrownBy(() -> FencingTokenMessagePostProcessor.forResources(List.of("accounts"))
                    .postProcessMessage(message()))
                    .isInstanceOf(MissingTokenException.class);
        }
    }

    @Test
    void forResourcesRejectsAnEmptyOrBlankConfigurationAtOnce() {
        assertThatThrownBy(() -> FencingTokenMessagePostProcessor.forResources(List.of()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at least one resource");
        assertThatThrownBy(() -> FencingTokenMessagePostProcessor.forResources(List.of("accounts", " ")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("' '");
    }
}
