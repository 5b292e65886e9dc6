package dev.fencing.it.weaving;

import dev.fencing.context.FencingContext;
import dev.fencing.token.FencingToken;
import org.springframework.beans.factory.InitializingBean;

/**
 * A bean that makes a fenced write while it is initialized (seeding data with its lock's token), before the beans of
 * the configuration {@code @EnableFencing} imports: registered (or component-scanned) ahead of them.
 */
public class WovenSeeder implements InitializingBean {

    /** The ledger it seeds: not a bean, woven code fences it all the same. */
    public final WovenLedger ledger = new WovenLedger();

    @Override
    public void afterPropertiesSet() {
        FencingContext.run(new FencingToken("woven-ledger", 1, "seeder"), () -> ledger.append("seed"));
    }
}
