package dev.fencing.testsupport.core;

import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.testsupport.IssuedTokensContract;

/** The in-memory issuer's counter and leases, as recovery reads them. */
class InMemoryIssuedTokensTest extends IssuedTokensContract {

    private final InMemoryTokenIssuer issuer = new InMemoryTokenIssuer();

    @Override
    protected TokenIssuer issuer() {
        return issuer;
    }
}
