// README.md, "Spring Boot". SpringBootDocsTest checks these coordinates against the build and against spring-boot.xml:
// the same artifacts, the BOM at the version of the parent pom.
dependencies {
    // tag::gradle[]
    implementation(platform("dev.fencing:fencing-bom:0.1.0-SNAPSHOT")) // every fencing module at one version
    implementation("dev.fencing:fencing-spring-boot-starter")         // brings fencing-jdbc, fencing-web, fencing-amqp
    // end::gradle[]
}
