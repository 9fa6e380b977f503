<?php /* wp-login.php */ ?>
