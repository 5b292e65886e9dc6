package dev.fencing.testsupport.core;

import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.OffsetTokenIssuer;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.testsupport.IssuedTokensContract;

/** The offset decorator's highest issued token and held state, as recovery reads them. */
class OffsetIssuedTokensTest extends IssuedTokensContract {

    private final TokenIssuer issuer = OffsetTokenIssuer.of(new InMemoryTokenIssuer(), 7_000_000);

    @Override
    protected TokenIssuer issuer() {
        return issuer;
    }
}
