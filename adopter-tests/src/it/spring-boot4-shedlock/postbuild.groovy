// The checks every adopter project shares: one Netty version in the dependency tree.
new GroovyShell(binding).evaluate(new File(checks))

// And the Lettuce Warden is built on, not the one Boot's parent manages; the ShedLock, Spring Framework and
// Boot this project proves.
def log = new File(basedir, 'build.log').text
def lettuce = (log =~ /io\.lettuce:lettuce-core:jar:([^:\s]+):compile/).collect { it[1] } as TreeSet
assert lettuce == [lettuceVersion] as TreeSet : "Lettuce ${lettuce}, expected ${lettuceVersion}"
def shedlock = (log =~ /net\.javacrumbs\.shedlock:shedlock-spring:jar:([^:\s]+):compile/).collect { it[1] } as TreeSet
assert shedlock == [shedlockVersion] as TreeSet : "shedlock-spring ${shedlock}, expected ${shedlockVersion}"
def boot = (log =~ /org\.springframework\.boot:spring-boot:jar:([^:\s]+):compile/).collect { it[1] } as TreeSet
assert boot == [springBootVersion] as TreeSet : "Spring Boot ${boot}, expected ${springBootVersion}"
println "[adopter] spring-boot4-shedlock: Boot ${boot.join('')}, shedlock-spring ${shedlock.join('')}, Lettuce ${lettuce.join('')}"
return true
