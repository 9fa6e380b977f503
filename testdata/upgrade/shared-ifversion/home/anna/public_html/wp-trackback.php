<?php /* wp-trackback.php */ ?>
