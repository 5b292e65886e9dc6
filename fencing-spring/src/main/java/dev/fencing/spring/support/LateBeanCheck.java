package dev.fencing.spring.support;

import org.springframework.beans.factory.config.BeanPostProcessor;

/**
 * Checks each bean created after startup checked every bean (a lazy bean, a prototype, a scoped target) whose
 * classes startup did not check: known then by a supertype ({@code @Bean AccountRepository accounts()}), its class
 * was found only if it lies under the application's packages. The bean's {@code @Fenced} methods are checked as
 * startup checks them, and a problem fails its creation, so it never serves a call. Not ordered: it runs after the
 * auto-proxy creator, and sees the proxy.
 */
final class LateBeanCheck implements BeanPostProcessor {

    /** Its bean name. */
    static final String BEAN = "dev.fencing.internalLateBeanCheck";

    private volatile FencingStartupValidator validator;

    /** Called by the startup check once it checked every bean: from then on, beans created are checked here. */
    void startedBy(FencingStartupValidator validator) {
        this.validator = validator;
    }

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        FencingStartupValidator startup = validator;
        if (startup != null && !startup.checked(bean)) {
            startup.checkCreatedLater(beanName, bean);
        }
        return bean;
    }
}
