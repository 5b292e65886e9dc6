package dev.fencing.spring.support;

import org.springframework.beans.factory.config.BeanPostProcessor;

import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * Checks each bean created after startup checked every bean (a lazy bean, a prototype, a scoped target) whose
 * classes startup did not check: known then by a supertype ({@code @Bean AccountRepository accounts()}), its class
 * was found only if it lies under the application's packages. The bean's {@code @Fenced} methods are checked as
 * startup checks them, and a problem fails its creation, so it never serves a call. The beans created before that,
 * while the context starts (a prototype injected into a singleton), are kept for the startup check, which checks
 * those whose classes it did not see. Not ordered: it runs after the auto-proxy creator, and sees the proxy.
 */
final class LateBeanCheck implements BeanPostProcessor {

    /** Its bean name. */
    static final String BEAN = "dev.fencing.internalLateBeanCheck";

    private volatile FencingStartupValidator validator;

    /** The beans created before the startup check ran, until it takes them. */
    private final Queue<Created> early = new ConcurrentLinkedQueue<>();

    /** Called by the startup check once it checked every bean: from then on, beans created are checked here. */
    void startedBy(FencingStartupValidator validator) {
        this.validator = validator;
        early.clear();
    }

    /** The beans created so far, before the startup check; each is handed out once. */
    List<Created> takeEarly() {
        List<Created> taken = new ArrayList<>();
        for (Created created; (created = early.poll()) != null; ) {
            taken.add(created);
        }
        return taken;
    }

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        FencingStartupValidator startup = validator;
        if (startup == null) {
            early.add(new Created(beanName, bean));
        } else if (!startup.checked(bean)) {
            startup.checkCreatedLater(beanName, bean);
        }
        return bean;
    }

    /**
     * A bean created before the startup check.
     *
     * @param name its bean name
     * @param bean the bean, as post-processed so far (a proxy, when the auto-proxy creator made one)
     */
    record Created(String name, Object bean) {
    }
}
