package dev.fencing.docs.weaving;

import dev.fencing.annotation.Fenced;
import dev.fencing.spring.EnableFencing;
import org.springframework.context.annotation.Configuration;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;

// docs/weaving.md: one method with both annotations, the fence ordered inside the transaction.
// TransactionOrderTest starts it, and shows that without the order startup fails.

// tag::transaction-order[]
@Configuration
@EnableTransactionManagement(order = 0)          // the transaction outside: lower than @EnableFencing's order
@EnableFencing
class TransactionalFencingConfig {
}

class LedgerService {
    @Transactional
    @Fenced(resource = "ledger", key = "#entryId")
    public void post(long entryId, long amount) { /* the fenced write, in the transaction */ }
}
// end::transaction-order[]
